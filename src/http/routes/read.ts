import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Catalog } from '../../catalog/catalog.js';
import { monthOf } from '../../limits/types.js';
import type { Store } from '../../storage/store.js';
import type { AlertStatus } from '../../storage/types.js';
import type { Clock } from '../../util/clock.js';
import type { AuditTrail } from '../../audit/trail.js';
import { ApiError } from '../errors.js';
import { eventView } from '../../storage/event-view.js';
import { ErrorResponses, integerQuery, KeyAuth, pageLimit, PageQuery, queryTime, TimeQuery } from '../schemas.js';
import { alertViewsWithAssignees, alertViewWithAssignee } from '../alert-views.js';
import { badAssignee, checkAssignee, triageAlert } from '../alert-triage.js';
import { NameFilterParam, parseNameFilter } from '../list-filter.js';
import { usageReport } from '../usage-report.js';
import { requestAccount } from '../context.js';
import { ALERT_FIELDS, EVENT_FIELDS, parseQuery, QUERY_LIMITS, type QueryFields, type QueryNode } from '../../util/search-query.js';
import { readSortCursor } from '../../storage/sort-cursor.js';

export interface ReadRouteDeps {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly clock: Clock;
  readonly alertClosed?: (accountId: string, type: string, subject: string) => Promise<void>;
  readonly audit: AuditTrail;
}

const MinRisk = Type.Integer({ minimum: 0, maximum: 100 });

export const SearchText = Type.String({
  maxLength: QUERY_LIMITS.length,
  description: 'A search query: field:value, wildcards * and ?, ranges, CIDR, AND/OR/NOT, parentheses, free text (docs/reference/api.md, "Search")',
});
export const EventSortParam = Type.Union([Type.Literal('-occurred_at'), Type.Literal('occurred_at'), Type.Literal('-risk'), Type.Literal('risk')], {
  description: 'Order: event time or risk, - for the highest first (default -occurred_at)',
});

/** A search query of a list's `q`, read against the list's fields: a 400 naming the position of its first problem. */
export function searchQuery(text: string | undefined, fields: QueryFields): QueryNode | null {
  if (text === undefined) return null;
  const read = parseQuery(text, fields);
  if (read.ok) return read.query;
  const message = `${read.message} at position ${read.position}`;
  throw new ApiError({ code: 'INVALID_REQUEST', message: `q: ${message}`, details: [{ field: 'q', message }] });
}

/** A sorted list's cursor is the one it answered; anything else is a 400 rather than a silent empty page. */
function sortedCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || readSortCursor(cursor) !== undefined) return cursor;
  const message = 'not a cursor of this list: pass next_cursor as it was answered';
  throw new ApiError({ code: 'INVALID_REQUEST', message: `cursor: ${message}`, details: [{ field: 'cursor', message }] });
}

const EventsQuery = Type.Object(
  {
    q: Type.Optional(SearchText),
    sort: Type.Optional(EventSortParam),
    type: Type.Optional(NameFilterParam),
    prefix: Type.Optional(Type.String({ maxLength: 100, description: 'Deprecated: prefix=auth.login equals type=auth.login.*' })),
    actor_id: Type.Optional(Type.String({ maxLength: 256 })),
    ip: Type.Optional(Type.String({ maxLength: 64 })),
    min_risk: Type.Optional(MinRisk),
    since: Type.Optional(TimeQuery),
    until: Type.Optional(TimeQuery),
    tag: Type.Optional(Type.String({ maxLength: 100 })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const AlertSortParam = Type.Union(
  [
    Type.Literal('-last_seen'),
    Type.Literal('last_seen'),
    Type.Literal('-first_seen'),
    Type.Literal('first_seen'),
    Type.Literal('-severity'),
    Type.Literal('severity'),
  ],
  { description: 'Order: last or first sighting or severity, - for the latest or highest first (default: newest alert first)' },
);

const AlertsQuery = Type.Object(
  {
    q: Type.Optional(SearchText),
    sort: Type.Optional(AlertSortParam),
    type: Type.Optional(NameFilterParam),
    severity: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('critical')])),
    status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved'), Type.Literal('false_positive')])),
    actor_id: Type.Optional(Type.String({ maxLength: 256 })),
    ip: Type.Optional(Type.String({ maxLength: 64, description: 'Alerts raised on the address or naming it as their ip' })),
    since: Type.Optional(TimeQuery),
    until: Type.Optional(TimeQuery),
    assignee: Type.Optional(Type.String({ maxLength: 64, description: 'me (the signed-in member), unassigned, or a member id (usr_…)' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const AlertStatusSchema = Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved'), Type.Literal('false_positive')]);
const AlertPatch = Type.Object(
  {
    status: Type.Optional(AlertStatusSchema),
    // null comes first: the validator coerces types, and would otherwise read null as an empty string.
    assignee: Type.Optional(
      Type.Union([Type.Null(), Type.String({ maxLength: 64 })], { description: 'The id (usr_…) of a member of the account, or null to unassign' }),
    ),
  },
  { additionalProperties: false },
);

/** The `assignee` filter of an alert list as the store takes it: a user id, or null for unassigned alerts. */
function assigneeFilter(request: FastifyRequest, value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'unassigned') return null;
  if (value === 'me') {
    const principal = requestAccount(request).principal;
    if (principal.kind === 'member') return principal.userId;
    throw badAssignee('assignee=me needs a person signed in to the dashboard; an API key is no one: give a member id (usr_…) or unassigned.');
  }
  if (value.startsWith('usr_')) return value;
  throw badAssignee('assignee must be me, unassigned or a member id (usr_…).');
}

const readRoute = (summary: string, tags: string[]) => ({ summary, tags, security: KeyAuth, response: { ...ErrorResponses } });

/** Read API; every query is scoped to the key's account (another account's id is 404). */
export function registerReadRoutes(app: FastifyInstance, deps: ReadRouteDeps): void {
  const accountOf = (request: FastifyRequest): string => requestAccount(request).account.id;

  app.get<{ Querystring: Static<typeof EventsQuery> }>('/v1/events', {
    config: { access: 'read' },
    schema: { ...readRoute('List or search events, newest event time first', ['events']), querystring: EventsQuery },
    handler: async (request) => {
      const q = request.query;
      const type = parseNameFilter(q.type);
      const query = searchQuery(q.q, EVENT_FIELDS);
      const page = await deps.store.events.listEvents(
        accountOf(request),
        {
          query,
          sort: q.sort ?? '-occurred_at',
          type: type.exact,
          typePrefix: type.prefix ?? q.prefix,
          actorId: q.actor_id,
          ip: q.ip,
          minRisk: integerQuery(q.min_risk, 'min_risk', MinRisk),
          since: queryTime(q.since, 'since'),
          until: queryTime(q.until, 'until'),
          tag: q.tag,
        },
        pageLimit(q.limit),
        sortedCursor(q.cursor),
      );
      return { data: page.items.map(eventView), next_cursor: page.nextCursor };
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/v1/events/:id', {
    config: { access: 'read' },
    schema: { ...readRoute('One event with its enrichment, tags and score breakdown', ['events']), params: IdParams },
    handler: async (request) => {
      const row = await deps.store.events.getEvent(accountOf(request), request.params.id);
      if (!row) throw new ApiError({ code: 'NOT_FOUND', message: `No event ${request.params.id}.` });
      return eventView(row);
    },
  });

  app.get<{ Querystring: Static<typeof AlertsQuery> }>('/v1/alerts', {
    config: { access: 'read' },
    schema: { ...readRoute('List alerts, newest first', ['alerts']), querystring: AlertsQuery },
    handler: async (request) => {
      const q = request.query;
      const type = parseNameFilter(q.type);
      const page = await deps.store.alerts.listAlerts(
        accountOf(request),
        {
          query: searchQuery(q.q, ALERT_FIELDS),
          ...(q.sort === undefined ? {} : { sort: q.sort }),
          type: type.exact,
          typePrefix: type.prefix,
          severity: q.severity,
          status: q.status,
          actorId: q.actor_id,
          ip: q.ip,
          since: queryTime(q.since, 'since'),
          until: queryTime(q.until, 'until'),
          assignee: assigneeFilter(request, q.assignee),
        },
        pageLimit(q.limit),
        q.sort === undefined ? q.cursor : sortedCursor(q.cursor),
      );
      return { data: await alertViewsWithAssignees(deps.store.members, page.items), next_cursor: page.nextCursor };
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/v1/alerts/:id', {
    config: { access: 'read' },
    schema: { ...readRoute('One alert with the events behind it', ['alerts']), params: IdParams },
    handler: async (request) => {
      const alert = await deps.store.alerts.getAlert(accountOf(request), request.params.id);
      if (!alert) throw new ApiError({ code: 'NOT_FOUND', message: `No alert ${request.params.id}.` });
      return alertViewWithAssignee(deps.store.members, alert);
    },
  });

  const noAlert = (id: string) => new ApiError({ code: 'NOT_FOUND', message: `No alert ${id}.` });
  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof AlertPatch> }>('/v1/alerts/:id', {
    config: { access: 'triage' },
    schema: { ...readRoute('Change an alert’s status, its assignee, or both', ['alerts']), params: IdParams, body: AlertPatch },
    handler: async (request) => {
      const accountId = accountOf(request);
      const { status, assignee } = request.body;
      if (status === undefined && assignee === undefined) throw new ApiError({ code: 'INVALID_REQUEST', message: 'Send "status", "assignee" or both.' });
      const before = await deps.store.alerts.getAlert(accountId, request.params.id);
      if (!before) throw noAlert(request.params.id);
      await checkAssignee(deps.store, accountId, assignee);
      const result = await triageAlert(deps, request, before, { status: status as AlertStatus | undefined, assignee });
      if (!result) throw noAlert(before.id);
      return alertViewWithAssignee(deps.store.members, result.alert);
    },
  });

  app.get('/v1/usage', {
    config: { access: 'read' },
    schema: readRoute('Monthly usage: used, cap, remaining, dropped, overage and its estimated cost', ['usage']),
    handler: async (request) => {
      const ctx = requestAccount(request);
      const now = deps.clock.now();
      const usage = await deps.store.stats.getUsage(ctx.account.id, monthOf(now));
      const daily = await deps.store.stats.dailyCounts(ctx.account.id, Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1));
      return usageReport(ctx.plan, usage, daily, now);
    },
  });

  app.get('/v1/catalog', {
    config: { access: 'any' },
    schema: readRoute('Event types, inferred types, families, detectors, alert types and kill chains', ['catalog']),
    handler: async () => deps.catalog.describe(),
  });
}
