import { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../storage/store.js';
import type { AlertFilter, AlertRow, EventFilter, EventRow, Page } from '../../storage/types.js';
import type { Clock } from '../../util/clock.js';
import { DAY_MS } from '../../util/duration.js';
import { ALERT_FIELDS, EVENT_FIELDS } from '../../util/search-query.js';
import { requestAccount } from '../context.js';
import { ApiError } from '../errors.js';
import { ErrorResponses, integerQuery, KeyAuth, queryTime, TimeQuery } from '../schemas.js';
import { eventView } from '../../storage/event-view.js';
import { AlertSortParam, EventSortParam, searchQuery, SearchText } from './read.js';
import { alertViewsWithAssignees } from '../alert-views.js';

export interface SearchRouteDeps {
  readonly store: Store;
  readonly clock: Clock;
}

const Buckets = Type.Integer({ minimum: 1, maximum: 200, default: 60 });

const HistogramQuery = Type.Object(
  {
    q: Type.Optional(SearchText),
    since: Type.Optional(TimeQuery),
    until: Type.Optional(TimeQuery),
    buckets: Type.Optional(Buckets),
  },
  { additionalProperties: false },
);

const ExportFormat = Type.Union([Type.Literal('ndjson'), Type.Literal('csv')], { default: 'ndjson' });

const ExportQuery = Type.Object(
  { format: ExportFormat, q: Type.Optional(SearchText), since: Type.Optional(TimeQuery), until: Type.Optional(TimeQuery), sort: Type.Optional(EventSortParam) },
  { additionalProperties: false },
);

const AlertExportQuery = Type.Object(
  { format: ExportFormat, q: Type.Optional(SearchText), since: Type.Optional(TimeQuery), until: Type.Optional(TimeQuery), sort: Type.Optional(AlertSortParam) },
  { additionalProperties: false },
);

/** Rows an export reads from the store at a time: what it holds in memory, whatever the result's size. */
const EXPORT_PAGE = 500;

/** The columns of a CSV export, each with how it is read from the event as /v1/events answers it. */
const CSV_COLUMNS: readonly (readonly [string, (e: Record<string, unknown>) => unknown])[] = [
  ['id', (e) => e.id],
  ['occurred_at', (e) => e.timestamp],
  ['received_at', (e) => e.received_at],
  ['type', (e) => e.event],
  ['actor_id', (e) => e.actor_id],
  ['email', (e) => e.email],
  ['ip', (e) => e.ip],
  ['country', (e) => member(e, 'enrichment', 'geo', 'country')],
  ['risk', (e) => member(e, 'risk', 'score')],
  ['tags', (e) => (Array.isArray(e.tags) ? e.tags.join(' ') : undefined)],
  ['host', (e) => e.host],
  ['session_id', (e) => e.session_id],
  ['user_agent', (e) => e.user_agent],
  ['request.method', (e) => member(e, 'request', 'method')],
  ['request.path', (e) => member(e, 'request', 'path')],
  ['request.query', (e) => member(e, 'request', 'query')],
];

/** The columns of an alert CSV export, read from the alert as /v1/alerts answers it. */
const ALERT_CSV_COLUMNS: readonly (readonly [string, (a: Record<string, unknown>) => unknown])[] = [
  ['id', (a) => a.id],
  ['type', (a) => a.type],
  ['severity', (a) => a.severity],
  ['status', (a) => a.status],
  ['subject', (a) => a.subject],
  ['actor_id', (a) => a.actor_id],
  ['count', (a) => a.count],
  ['first_seen', (a) => a.first_seen],
  ['last_seen', (a) => a.last_seen],
  ['assignee', (a) => member(a, 'assignee', 'email') ?? a.assignee],
];

function member(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

/**
 * One CSV cell: quoted when it holds a comma, quote or line break; a text a spreadsheet would
 * read as a formula (starting with = + - @, a tab or a carriage return) gets a leading `'`,
 * so opening an export never runs what a client sent.
 */
export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  let text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
  const first = text.charAt(0);
  if (first === '=' || first === '+' || first === '-' || first === '@' || first === '\t' || first === '\r') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const csvLine = (cells: readonly unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;

/** The time range of a histogram: since/until, or the 24 hours before now. */
function histogramRange(since: number | undefined, until: number | undefined, now: number): { from: number; to: number } {
  const to = until ?? (since !== undefined ? Math.max(since + DAY_MS, now) : now);
  const from = since ?? to - DAY_MS;
  if (from >= to) {
    const message = 'since must be before until';
    throw new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field: 'since', message }] });
  }
  return { from, to };
}

/** A histogram's range (histogramRange) cut into its buckets' equal spans. */
function histogramSpans(q: Static<typeof HistogramQuery>, now: number): { from: number; to: number; bucketMs: number; buckets: number } {
  const buckets = integerQuery(q.buckets, 'buckets', Buckets) ?? 60;
  const { from, to } = histogramRange(queryTime(q.since, 'since'), queryTime(q.until, 'until'), now);
  return { from, to, bucketMs: Math.max(1, Math.ceil((to - from) / buckets)), buckets };
}

/** A list's pages one after the other, each as the views `view` makes of its rows. */
async function* pagesOf<R>(
  list: (cursor: string | undefined) => Promise<Page<R>>,
  view: (rows: readonly R[]) => Record<string, unknown>[] | Promise<Record<string, unknown>[]>,
): AsyncGenerator<Record<string, unknown>[]> {
  let cursor: string | undefined;
  for (;;) {
    const page = await list(cursor);
    yield await view(page.items);
    if (page.nextCursor === null) return;
    cursor = page.nextCursor;
  }
}

function histogramAnswer(from: number, to: number, bucketMs: number, counts: readonly number[]) {
  return {
    bucket_ms: bucketMs,
    since: new Date(from).toISOString(),
    until: new Date(to).toISOString(),
    buckets: counts.map((count, i) => ({ at: new Date(from + i * bucketMs).toISOString(), count })),
  };
}

export type CsvColumns = readonly (readonly [string, (row: Record<string, unknown>) => unknown])[];

/** Streams the pages of a list as NDJSON or CSV, one chunk per page: memory holds one page, whatever the result's size. */
export function sendExport(
  reply: FastifyReply,
  what: string,
  format: 'ndjson' | 'csv',
  columns: CsvColumns,
  pages: AsyncGenerator<Record<string, unknown>[]>,
  now: number,
): FastifyReply {
  async function* lines(): AsyncGenerator<string> {
    if (format === 'csv') yield csvLine(columns.map(([name]) => name));
    for await (const rows of pages) {
      let chunk = '';
      for (const view of rows) chunk += format === 'csv' ? csvLine(columns.map(([, read]) => read(view))) : `${JSON.stringify(view)}\n`;
      if (chunk !== '') yield chunk;
    }
  }
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  return reply
    .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
    .header('content-disposition', `attachment; filename="vigil-${what}-${stamp}.${format}"`)
    .send(Readable.from(lines()));
}

/** Histograms and streamed exports of the event and alert lists: the same `q`, time range and sort as the lists. */
export function registerSearchRoutes(app: FastifyInstance, deps: SearchRouteDeps): void {
  const accountOf = (request: FastifyRequest): string => requestAccount(request).account.id;

  app.get<{ Querystring: Static<typeof HistogramQuery> }>('/v1/events/histogram', {
    config: { access: 'read' },
    schema: {
      summary: 'How many events a search finds in each span of event time (the last 24 hours unless since/until say)',
      tags: ['events'],
      security: KeyAuth,
      response: { ...ErrorResponses },
      querystring: HistogramQuery,
    },
    handler: async (request) => {
      const q = request.query;
      const query = searchQuery(q.q, EVENT_FIELDS);
      const { from, to, bucketMs, buckets } = histogramSpans(q, deps.clock.now());
      const counts = await deps.store.events.eventHistogram(accountOf(request), { query, until: to }, from, bucketMs, buckets);
      return histogramAnswer(from, to, bucketMs, counts);
    },
  });

  app.get<{ Querystring: Static<typeof ExportQuery> }>('/v1/events/export', {
    config: { access: 'read' },
    schema: {
      summary: 'Every event a search finds, streamed as NDJSON or CSV',
      tags: ['events'],
      security: KeyAuth,
      response: { ...ErrorResponses },
      querystring: ExportQuery,
    },
    handler: async (request, reply) => {
      const q = request.query;
      const accountId = accountOf(request);
      const filter: EventFilter = {
        query: searchQuery(q.q, EVENT_FIELDS),
        sort: q.sort ?? '-occurred_at',
        since: queryTime(q.since, 'since'),
        until: queryTime(q.until, 'until'),
      };
      const pages = pagesOf(
        (cursor) => deps.store.events.listEvents(accountId, filter, EXPORT_PAGE, cursor),
        (rows: readonly EventRow[]) => rows.map((row) => eventView(row)),
      );
      return sendExport(reply, 'events', q.format, CSV_COLUMNS, pages, deps.clock.now());
    },
  });

  app.get<{ Querystring: Static<typeof HistogramQuery> }>('/v1/alerts/histogram', {
    config: { access: 'read' },
    schema: {
      summary: 'How many alerts a search finds in each span of first sighting (the last 24 hours unless since/until say)',
      tags: ['alerts'],
      security: KeyAuth,
      response: { ...ErrorResponses },
      querystring: HistogramQuery,
    },
    handler: async (request) => {
      const q = request.query;
      const query = searchQuery(q.q, ALERT_FIELDS);
      const { from, to, bucketMs, buckets } = histogramSpans(q, deps.clock.now());
      const counts = await deps.store.alerts.alertHistogram(accountOf(request), { query }, from, bucketMs, buckets);
      return histogramAnswer(from, to, bucketMs, counts);
    },
  });

  app.get<{ Querystring: Static<typeof AlertExportQuery> }>('/v1/alerts/export', {
    config: { access: 'read' },
    schema: {
      summary: 'Every alert a search finds, streamed as NDJSON or CSV',
      tags: ['alerts'],
      security: KeyAuth,
      response: { ...ErrorResponses },
      querystring: AlertExportQuery,
    },
    handler: async (request, reply) => {
      const q = request.query;
      const accountId = accountOf(request);
      const filter: AlertFilter = {
        query: searchQuery(q.q, ALERT_FIELDS),
        sort: q.sort ?? '-last_seen',
        since: queryTime(q.since, 'since'),
        until: queryTime(q.until, 'until'),
      };
      const pages = pagesOf(
        (cursor) => deps.store.alerts.listAlerts(accountId, filter, EXPORT_PAGE, cursor),
        async (rows: readonly AlertRow[]) => (await alertViewsWithAssignees(deps.store.members, rows)) as unknown as Record<string, unknown>[],
      );
      return sendExport(reply, 'alerts', q.format, ALERT_CSV_COLUMNS, pages, deps.clock.now());
    },
  });
}
