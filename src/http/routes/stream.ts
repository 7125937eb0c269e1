import { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { LiveAlertView, LiveFeed, LiveMessage } from '../../storage/live-feed.js';
import { requestAccount } from '../context.js';
import { ApiError } from '../errors.js';
import { NameFilterParam, parseNameFilter } from '../list-filter.js';
import { ErrorResponses, integerQuery, KeyAuth } from '../schemas.js';
import { eventSearchText } from '../../storage/search-text.js';
import { matchesQuery, wordsOf } from '../../util/search-match.js';
import { ALERT_FIELDS, EVENT_FIELDS, parseQuery, type QueryNode } from '../../util/search-query.js';
import { SearchText } from './read.js';

export interface StreamRouteDeps {
  readonly live: LiveFeed;
  /** Between two keep-alive comments (ms). */
  readonly keepAliveMs?: number;
  /** Text a stream holds for a reader that does not keep up before it drops messages (bytes). */
  readonly maxQueuedBytes?: number;
}

type Kind = 'events' | 'alerts';

const MinRisk = Type.Integer({ minimum: 0, maximum: 100 });
const StreamQuery = Type.Object(
  {
    kinds: Type.Optional(Type.String({ maxLength: 20, pattern: '^(events|alerts)(,(events|alerts))?$', description: 'events, alerts or both (default both)' })),
    q: Type.Optional(SearchText),
    type: Type.Optional(NameFilterParam),
    min_risk: Type.Optional(MinRisk),
  },
  { additionalProperties: false },
);

/** Filters of one stream, tested on each item as the API shows it. */
interface StreamFilter {
  readonly kinds: ReadonlySet<Kind>;
  readonly exact?: string;
  readonly prefix?: string;
  readonly minRisk?: number;
  /** The search each kind's items pass (the list's grammar); null: no search; undefined: the query names fields the kind lacks. */
  readonly eventQuery?: QueryNode | null;
  readonly alertQuery?: QueryNode | null;
}

/** How an event (as the API shows it) answers a field of the event list's grammar. */
function eventField(e: Readonly<Record<string, unknown>>, field: string): unknown {
  const at = (...path: string[]): unknown =>
    path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), e);
  switch (field) {
    case 'type':
      return e.event;
    case 'risk':
      return at('risk', 'score');
    case 'country':
      return at('enrichment', 'geo', 'country');
    case 'asn':
      return at('enrichment', 'asn', 'number');
    case 'device_id':
      return at('metadata', 'device_id');
    case 'occurred_at':
      return e.timestamp;
    case 'tag':
      return e.tags;
    default:
      return field.includes('.') ? at(...field.split('.')) : e[field];
  }
}

/** The words of the text the stored row's full-text index holds (search-text.ts), so free text finds on the stream what it finds in the list. */
const eventWords = (e: Readonly<Record<string, unknown>>): Set<string> => wordsOf([eventSearchText(e)]);

function passesQuery(query: QueryNode | null | undefined, field: (f: string) => unknown, words: () => Set<string>): boolean {
  if (query === undefined) return false;
  return query === null || matchesQuery(query, field, words);
}

function typeMatches(filter: StreamFilter, type: unknown): boolean {
  if (filter.exact !== undefined) return type === filter.exact;
  if (filter.prefix !== undefined) return typeof type === 'string' && type.startsWith(filter.prefix);
  return true;
}

function eventMatches(filter: StreamFilter, event: Readonly<Record<string, unknown>>): boolean {
  if (!filter.kinds.has('events') || !typeMatches(filter, event.event)) return false;
  if (
    !passesQuery(
      filter.eventQuery,
      (f) => eventField(event, f),
      () => eventWords(event),
    )
  )
    return false;
  if (filter.minRisk === undefined) return true;
  const score = (event.risk as { score?: unknown } | undefined)?.score;
  return typeof score === 'number' && score >= filter.minRisk;
}

function alertMatches(filter: StreamFilter, alert: LiveAlertView): boolean {
  if (!filter.kinds.has('alerts') || !typeMatches(filter, alert.type)) return false;
  const view = alert as unknown as Readonly<Record<string, unknown>>;
  return passesQuery(
    filter.alertQuery,
    (f) => view[f],
    () => wordsOf([alert.type, alert.subject, view.actor_id]),
  );
}

/** The stream's search for one kind: null without q, undefined when q names fields the kind lacks (nothing of it passes). */
function kindQuery(text: string | undefined, fields: typeof EVENT_FIELDS): QueryNode | null | undefined {
  if (text === undefined || text.trim() === '') return null;
  const read = parseQuery(text, fields);
  return read.ok ? read.query : undefined;
}

const frame = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * GET /v1/stream: the account's new events and alert changes as server-sent events, from the
 * moment the stream is subscribed (`event: ready`). Each stream holds one of the account's
 * stream slots until it closes. A reader slower than the account's traffic loses messages
 * rather than the service buffering them: once `maxQueuedBytes` of text wait for the connection,
 * further messages are dropped and counted, and an `event: dropped` tells the reader how many
 * before the next message it gets.
 */
export function registerStreamRoutes(app: FastifyInstance, deps: StreamRouteDeps): void {
  const keepAliveMs = deps.keepAliveMs ?? 15_000;
  const maxQueued = deps.maxQueuedBytes ?? 256 * 1024;
  const open = new Set<(closing?: boolean) => void>();
  // Fastify waits for responses in flight before it closes: an endless one is ended first.
  app.addHook('preClose', (done) => {
    for (const end of [...open]) end(true);
    done();
  });

  app.get<{ Querystring: Static<typeof StreamQuery> }>('/v1/stream', {
    config: { access: 'read' },
    schema: {
      summary: 'Live tail: new events and alert changes as server-sent events',
      description:
        'text/event-stream. `event: ready` once subscribed; `event: event` (data: the event as GET /v1/events shows it); `event: alert` (data: the alert as GET /v1/alerts shows it, with `change`: opened or sighted; a sighting has no status); `event: dropped` (data: {"dropped": n, "total": n}: messages not sent because the reader was too slow); a `: keep-alive` comment every 15 s. At most 5 open streams per account (429 beyond).',
      tags: ['events'],
      security: KeyAuth,
      querystring: StreamQuery,
      response: { ...ErrorResponses },
    },
    handler: async (request, reply) => {
      const q = request.query;
      const accountId = requestAccount(request).account.id;
      const type = parseNameFilter(q.type);
      const kinds = new Set((q.kinds ?? 'events,alerts').split(',') as Kind[]);
      const filter: StreamFilter = {
        kinds,
        ...type,
        minRisk: integerQuery(q.min_risk, 'min_risk', MinRisk),
        eventQuery: kindQuery(q.q, EVENT_FIELDS),
        alertQuery: kindQuery(q.q, ALERT_FIELDS),
      };
      // A query no requested kind can read is refused as the lists refuse it.
      if ((!kinds.has('events') || filter.eventQuery === undefined) && (!kinds.has('alerts') || filter.alertQuery === undefined)) {
        const read = parseQuery(q.q ?? '', kinds.has('events') ? EVENT_FIELDS : ALERT_FIELDS);
        const message = read.ok ? 'the query names no field of the streamed kinds' : `${read.message} at position ${read.position}`;
        throw new ApiError({ code: 'INVALID_REQUEST', message: `q: ${message}`, details: [{ field: 'q', message }] });
      }

      let dropped = 0;
      let droppedTotal = 0;
      const out = new Readable({
        read() {
          // The connection took what was queued: tell the reader what it missed, before anything newer.
          if (dropped > 0) {
            out.push(frame('dropped', { dropped, total: droppedTotal }));
            dropped = 0;
          }
        },
      });
      const send = (text: string) => {
        if (out.destroyed || out.readableEnded) return;
        if (out.readableLength + text.length > maxQueued) {
          dropped++;
          droppedTotal++;
          return;
        }
        if (dropped > 0) {
          out.push(frame('dropped', { dropped, total: droppedTotal }));
          dropped = 0;
        }
        out.push(text);
      };
      const listener = (message: LiveMessage) => {
        for (const event of message.events) if (eventMatches(filter, event)) send(frame('event', event));
        for (const alert of message.alerts) if (alertMatches(filter, alert)) send(frame('alert', alert));
      };

      const subscription = await deps.live.open(accountId, listener);
      if (subscription === undefined) {
        reply.header('Retry-After', '15');
        throw new ApiError({
          code: 'RATE_LIMITED',
          message: `An account has at most ${deps.live.maxStreams} live streams open at once; close one and retry.`,
          retryAfter: 15,
        });
      }
      const keepAlive = setInterval(() => send(': keep-alive\n\n'), keepAliveMs);
      keepAlive.unref();
      let ended = false;
      const end = (closing = false) => {
        if (ended) return;
        ended = true;
        open.delete(end);
        clearInterval(keepAlive);
        subscription.close();
        if (!out.destroyed) out.push(null);
        // The service is stopping: the connection goes too, rather than idling until its keep-alive ends.
        if (closing) reply.raw.destroy();
      };
      open.add(end);
      // The response's 'close': the reader went away, or the response ended.
      reply.raw.on('close', () => end());
      out.on('error', () => end());

      out.push(frame('ready', { kinds: [...filter.kinds] }));
      return reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache').header('x-accel-buffering', 'no').send(out);
    },
  });
}
