import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AlertRow, AlertStatus } from '../../storage/types.js';
import { DAY_MS } from '../../util/duration.js';
import { GROUP_ALERT_IDS, groupAlerts, groupView, inGroup, newestEventOf, parseGroupKey, sourceOf } from '../alert-groups.js';
import { checkAssignee, triageAlert, type TriageDeps } from '../alert-triage.js';
import { requestAccount } from '../context.js';
import { ApiError } from '../errors.js';
import { NameFilterParam, parseNameFilter } from '../list-filter.js';
import { ErrorResponses, KeyAuth, pageLimit, PageQuery, queryTime, TimeQuery } from '../schemas.js';

/** Alerts read per grouping, newest first: a campaign of more is grouped from its newest ones. */
export const GROUP_SCAN = 5_000;
/** The window of the grouping when the query names none, and of a bulk triage by group key: the last 30 days. */
export const GROUP_WINDOW_MS = 30 * DAY_MS;

const AlertStatusSchema = Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved'), Type.Literal('false_positive')]);

const GroupsQuery = Type.Object(
  {
    type: Type.Optional(NameFilterParam),
    status: Type.Optional(AlertStatusSchema),
    since: Type.Optional(TimeQuery),
    until: Type.Optional(TimeQuery),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const BulkBody = Type.Object(
  {
    ids: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: GROUP_ALERT_IDS })),
    group: Type.Optional(Type.String({ minLength: 1, maxLength: 700, description: 'The key of a group of GET /v1/alerts/groups' })),
    status: Type.Optional(AlertStatusSchema),
    note: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    // null comes first: the validator coerces types, and would otherwise read null as an empty string.
    assignee: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 64 })], { description: 'A member id (usr_…), or null to unassign' })),
  },
  { additionalProperties: false },
);

const invalid = (field: string, message: string) => new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field, message }] });

/** The group pages' cursor: how many groups came before. */
function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^[0-9]{1,6}$/.test(cursor)) throw invalid('cursor', 'cursor must be the next_cursor of the previous page');
  return Number(cursor);
}

/** Alert campaigns (GET /v1/alerts/groups) and bulk triage (POST /v1/alerts/bulk). */
export function registerAlertCampaignRoutes(app: FastifyInstance, deps: TriageDeps): void {
  /** Each alert's source address, its newest event's address read in one query per 500 alerts. */
  const sources = async (accountId: string, alerts: readonly AlertRow[]) => {
    const needed = alerts.filter((a) => sourceOf(a, undefined) === undefined).flatMap((a) => newestEventOf(a) ?? []);
    const addresses = await deps.store.entities.eventAddresses(accountId, needed);
    return (alert: AlertRow) => sourceOf(alert, addresses.get(newestEventOf(alert) ?? ''));
  };

  app.get<{ Querystring: Static<typeof GroupsQuery> }>('/v1/alerts/groups', {
    config: { access: 'read' },
    schema: {
      summary: 'Alert campaigns: the alerts of one type from one address or network, or about one subject, as one row each',
      tags: ['alerts'],
      security: KeyAuth,
      querystring: GroupsQuery,
      response: { ...ErrorResponses },
    },
    handler: async (request) => {
      const q = request.query;
      const accountId = requestAccount(request).account.id;
      const limit = pageLimit(q.limit);
      const offset = offsetOf(q.cursor);
      const until = queryTime(q.until, 'until');
      const since = queryTime(q.since, 'since') ?? (until ?? deps.clock.now()) - GROUP_WINDOW_MS;
      const type = parseNameFilter(q.type);
      const page = await deps.store.alerts.listAlerts(accountId, { type: type.exact, typePrefix: type.prefix, status: q.status, since, until }, GROUP_SCAN);
      const groups = groupAlerts(page.items, await sources(accountId, page.items));
      const next = offset + limit < groups.length ? String(offset + limit) : null;
      return { data: groups.slice(offset, offset + limit).map(groupView), next_cursor: next, partial: page.nextCursor !== null };
    },
  });

  app.post<{ Body: Static<typeof BulkBody> }>('/v1/alerts/bulk', {
    config: { access: 'triage' },
    schema: {
      summary: 'Change the status, the assignee or add a note to many alerts: up to 1,000 ids, or one group',
      tags: ['alerts'],
      security: KeyAuth,
      body: BulkBody,
      response: { ...ErrorResponses },
    },
    handler: async (request) => {
      const { ids, group, status, note, assignee } = request.body;
      if ((ids === undefined) === (group === undefined)) throw invalid('ids', 'Send either "ids" or "group".');
      if (status === undefined && note === undefined && assignee === undefined) throw invalid('status', 'Send "status", "note", "assignee" or more.');
      const accountId = requestAccount(request).account.id;
      await checkAssignee(deps.store, accountId, assignee);
      let alerts: readonly AlertRow[];
      let notFound: string[] = [];
      if (ids !== undefined) {
        const wanted = [...new Set(ids)];
        alerts = (await deps.store.alerts.listAlerts(accountId, { ids: wanted }, wanted.length)).items;
        const found = new Set(alerts.map((a) => a.id));
        notFound = wanted.filter((id) => !found.has(id));
      } else {
        const key = parseGroupKey(group as string);
        if (key === undefined) throw invalid('group', 'group must be the key of a group of GET /v1/alerts/groups');
        const window = { type: key.type, since: deps.clock.now() - GROUP_WINDOW_MS };
        const candidates = (await deps.store.alerts.listAlerts(accountId, window, GROUP_SCAN)).items;
        const source = await sources(accountId, candidates);
        alerts = candidates.filter((a) => inGroup(key, a, source(a))).slice(0, GROUP_ALERT_IDS);
      }
      let updated = 0;
      let unchanged = 0;
      for (const alert of alerts) {
        const result = await triageAlert(deps, request, alert, { status: status as AlertStatus | undefined, assignee, note });
        if (result === undefined) notFound.push(alert.id);
        else if (result.changed) updated++;
        else unchanged++;
      }
      return { updated, unchanged, not_found: notFound };
    },
  });
}
