import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Catalog } from '../../catalog/catalog.js';
import { monthOf } from '../../limits/types.js';
import type { Store } from '../../storage/store.js';
import type { AlertStatus, EventRow } from '../../storage/types.js';
import type { Clock } from '../../util/clock.js';
import { alertView } from '../../storage/alert-view.js';
import { ApiError } from '../errors.js';
import { snakeCaseKeys } from '../../util/snake-case.js';
import { readQueryTime } from '../../util/time-text.js';
import { ErrorResponses, integerQuery, KeyAuth, PageLimit, PageQuery, requestTime } from '../schemas.js';
import { NameFilterParam, parseNameFilter } from '../list-filter.js';
import { usageReport } from '../usage-report.js';
import { requestAccount } from '../context.js';

export interface ReadRouteDeps {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly clock: Clock;
  readonly alertClosed?: (accountId: string, type: string, subject: string) => Promise<void>;
}

const TimeParam = Type.String({ maxLength: 40, description: 'ISO 8601 date-time or Unix milliseconds' });
const MinRisk = Type.Integer({ minimum: 0, maximum: 100 });

const EventsQuery = Type.Object(
  {
    type: Type.Optional(NameFilterParam),
    prefix: Type.Optional(Type.String({ maxLength: 100, description: 'Deprecated: prefix=auth.login equals type=auth.login.*' })),
    actor_id: Type.Optional(Type.String({ maxLength: 256 })),
    ip: Type.Optional(Type.String({ maxLength: 64 })),
    min_risk: Type.Optional(MinRisk),
    since: Type.Optional(TimeParam),
    until: Type.Optional(TimeParam),
    tag: Type.Optional(Type.String({ maxLength: 100 })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const AlertsQuery = Type.Object(
  {
    type: Type.Optional(NameFilterParam),
    severity: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('critical')])),
    status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved'), Type.Literal('false_positive')])),
    actor_id: Type.Optional(Type.String({ maxLength: 256 })),
    since: Type.Optional(TimeParam),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** A query time; a time no Date can hold is a 400 here rather than an error in the database. */
const parseTime = (value: string | undefined, field: string): number | undefined =>
  value === undefined ? undefined : requestTime(readQueryTime(value), field);

const pageLimit = (value: number | undefined): number => integerQuery(value, 'limit', PageLimit) ?? 50;

/** Events stored by earlier versions hold their enrichment in camelCase: it is answered in snake_case like the rest. */
const eventView = (row: EventRow) =>
  row.doc.enrichment === undefined ? { ...row.doc, id: row.id } : { ...row.doc, enrichment: snakeCaseKeys(row.doc.enrichment), id: row.id };

const readRoute = (summary: string, tags: string[]) => ({ summary, tags, security: KeyAuth, response: { ...ErrorResponses } });

/** Read API; every query is scoped to the key's account (another account's id is 404). */
export function registerReadRoutes(app: FastifyInstance, deps: ReadRouteDeps): void {
  const accountOf = (request: FastifyRequest): string => requestAccount(request).account.id;

  app.get<{ Querystring: Static<typeof EventsQuery> }>('/v1/events', {
    config: { access: 'read' },
    schema: { ...readRoute('List events, newest first', ['events']), querystring: EventsQuery },
    handler: async (request) => {
      const q = request.query;
      const type = parseNameFilter(q.type);
      const page = await deps.store.events.listEvents(
        accountOf(request),
        {
          type: type.exact,
          typePrefix: type.prefix ?? q.prefix,
          actorId: q.actor_id,
          ip: q.ip,
          minRisk: integerQuery(q.min_risk, 'min_risk', MinRisk),
          since: parseTime(q.since, 'since'),
          until: parseTime(q.until, 'until'),
          tag: q.tag,
        },
        pageLimit(q.limit),
        q.cursor,
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
        { type: type.exact, typePrefix: type.prefix, severity: q.severity, status: q.status, actorId: q.actor_id, since: parseTime(q.since, 'since') },
        pageLimit(q.limit),
        q.cursor,
      );
      return { data: page.items.map(alertView), next_cursor: page.nextCursor };
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/v1/alerts/:id', {
    config: { access: 'read' },
    schema: { ...readRoute('One alert with the events behind it', ['alerts']), params: IdParams },
    handler: async (request) => {
      const alert = await deps.store.alerts.getAlert(accountOf(request), request.params.id);
      if (!alert) throw new ApiError({ code: 'NOT_FOUND', message: `No alert ${request.params.id}.` });
      return alertView(alert);
    },
  });

  const AlertPatch = Type.Object(
    { status: Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved'), Type.Literal('false_positive')]) },
    { additionalProperties: false },
  );
  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof AlertPatch> }>('/v1/alerts/:id', {
    config: { access: 'triage' },
    schema: { ...readRoute('Change an alert status', ['alerts']), params: IdParams, body: AlertPatch },
    handler: async (request) => {
      const accountId = accountOf(request);
      const alert = await deps.store.alerts.setAlertStatus(accountId, request.params.id, request.body.status as AlertStatus, deps.clock.now());
      if (!alert) throw new ApiError({ code: 'NOT_FOUND', message: `No alert ${request.params.id}.` });
      if (alert.status === 'resolved' || alert.status === 'false_positive') await deps.alertClosed?.(accountId, alert.type, alert.subject);
      return alertView(alert);
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
