import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AuditStore } from '../../storage/store.js';
import type { AuditEntry } from '../../storage/types.js';
import { requestAccount } from '../context.js';
import { parseNameFilter } from '../list-filter.js';
import { ErrorResponses, KeyAuth, pageLimit, PageQuery, queryTime, TimeQuery } from '../schemas.js';

export interface AuditRouteDeps {
  readonly audit: Pick<AuditStore, 'list'>;
}

const NullableString = (description?: string) => Type.Union([Type.String(description === undefined ? {} : { description }), Type.Null()]);

const AuditQuery = Type.Object(
  {
    actor: Type.Optional(Type.String({ maxLength: 64, description: 'Who: a member id (usr_…), a key id (key_…) or operator' })),
    action: Type.Optional(
      Type.String({
        maxLength: 100,
        pattern: '^[a-z0-9_.]+(\\.\\*)?$',
        description: 'An action (alert.status_changed), or a prefix ending in "." or ".*" (alert. or alert.*)',
      }),
    ),
    target: Type.Optional(Type.String({ maxLength: 64, description: 'The id of the changed record (an alert, a threat model, a webhook, a member…)' })),
    since: Type.Optional(TimeQuery),
    until: Type.Optional(TimeQuery),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const AuditItem = Type.Object({
  id: Type.String(),
  at: Type.String({ description: 'ISO 8601' }),
  actor: Type.Object({
    kind: Type.Union(['member', 'key', 'operator', 'system', 'anonymous'].map((k) => Type.Literal(k))),
    id: NullableString(),
    label: NullableString('An email, a key prefix, cli, admin-api or vigil'),
  }),
  ip: NullableString(),
  user_agent: NullableString(),
  action: Type.String(),
  target: Type.Union([Type.Object({ kind: Type.String(), id: Type.String() }), Type.Null()]),
  changes: Type.Record(Type.String(), Type.Object({ before: Type.Unknown(), after: Type.Unknown() }), {
    description: 'Each changed field with its value before and after; a secret shows only that it changed',
  }),
  details: Type.Record(Type.String(), Type.Unknown()),
});

const AuditPage = Type.Object({
  data: Type.Array(AuditItem),
  next_cursor: NullableString('Pass as cursor for the next page; null at the end'),
});

const entryView = (e: AuditEntry): Static<typeof AuditItem> => ({
  id: e.id,
  at: new Date(e.at).toISOString(),
  actor: e.actor,
  ip: e.ip,
  user_agent: e.userAgent,
  action: e.action,
  target: e.targetKind === null || e.targetId === null ? null : { kind: e.targetKind, id: e.targetId },
  changes: e.changes,
  details: e.details,
});

/**
 * GET /v1/audit: the account's audit trail, newest first. Entries are only ever read here: the
 * API has no route that changes or deletes one (retention alone removes them).
 */
export function registerAuditRoutes(app: FastifyInstance, deps: AuditRouteDeps): void {
  app.get<{ Querystring: Static<typeof AuditQuery> }>('/v1/audit', {
    config: { access: 'read' },
    schema: {
      summary: 'The audit trail: who changed what, newest first',
      tags: ['audit'],
      security: KeyAuth,
      querystring: AuditQuery,
      response: { 200: AuditPage, ...ErrorResponses },
    },
    handler: async (request) => {
      const q = request.query;
      const action = parseNameFilter(q.action);
      const page = await deps.audit.list(
        requestAccount(request).account.id,
        {
          actorId: q.actor,
          action: action.exact ?? action.prefix,
          targetId: q.target,
          since: queryTime(q.since, 'since'),
          until: queryTime(q.until, 'until'),
        },
        pageLimit(q.limit),
        q.cursor,
      );
      return { data: page.items.map(entryView), next_cursor: page.nextCursor };
    },
  });
}
