import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Enrichment } from '../../event/enrichment.js';
import type { Store } from '../../storage/store.js';
import type { EntityRef, EntityWindow } from '../../storage/types.js';
import type { Clock } from '../../util/clock.js';
import { DAY_MS, HOUR_MS } from '../../util/duration.js';
import { parseAddress } from '../../util/ip.js';
import { alertViewsWithAssignees } from '../alert-views.js';
import { requestAccount } from '../context.js';
import { activityView, distributions, networkView } from '../entity-summary.js';
import { ApiError } from '../errors.js';
import { ErrorResponses, KeyAuth, queryTime, TimeQuery } from '../schemas.js';

export interface EntityRouteDeps {
  readonly store: Store;
  readonly clock: Clock;
  /** The address enrichers' answer for one address now; absent, an address's network comes from its stored events only. */
  readonly lookUpAddress?: (ip: string) => Enrichment;
}

/** A summary's window when the query names none: the last 30 days. */
export const ENTITY_DEFAULT_WINDOW_MS = 30 * DAY_MS;
/** Buckets of risk over time at most; each is a whole number of hours. */
const RISK_BUCKETS = 60;
/** Alerts listed with a summary, most recent first. */
const RECENT_ALERTS = 20;

const WindowQuery = Type.Object({ since: Type.Optional(TimeQuery), until: Type.Optional(TimeQuery) }, { additionalProperties: false });

const KINDS = [
  { kind: 'actor', param: 'id', maxLength: 256, what: 'an actor (actor_id)' },
  { kind: 'ip', param: 'ip', maxLength: 64, what: 'an address (ip)' },
  { kind: 'host', param: 'host', maxLength: 256, what: 'a host (the host field of agent events)' },
] as const;

/** The window of a summary: since/until by event time, the last 30 days by default, in buckets of whole hours. */
function windowOf(query: Static<typeof WindowQuery>, now: number): EntityWindow {
  const until = queryTime(query.until, 'until') ?? now;
  const since = queryTime(query.since, 'since') ?? until - ENTITY_DEFAULT_WINDOW_MS;
  if (since >= until) {
    const message = 'since must be before until';
    throw new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field: 'since', message }] });
  }
  return { since, until, bucketMs: Math.max(1, Math.ceil((until - since) / RISK_BUCKETS / HOUR_MS)) * HOUR_MS };
}

/**
 * Entity summaries: what an account's events and alerts say about one actor, address or host
 * in a window. An entity nothing is stored about answers zeros (its page may be opened from a
 * link before its first event); another account's entity is such an entity.
 */
export function registerEntityRoutes(app: FastifyInstance, deps: EntityRouteDeps): void {
  for (const { kind, param, maxLength, what } of KINDS) {
    const Params = Type.Object({ [param]: Type.String({ minLength: 1, maxLength }) });
    app.get<{ Params: Record<string, string>; Querystring: Static<typeof WindowQuery> }>(`/v1/entities/${kind}/:${param}`, {
      config: { access: 'read' },
      schema: {
        summary: `Summary of ${what}: counts, risk over time, where it comes from, what it touches, its alerts`,
        tags: ['entities'],
        security: KeyAuth,
        params: Params,
        querystring: WindowQuery,
        response: { ...ErrorResponses },
      },
      handler: async (request: FastifyRequest<{ Params: Record<string, string>; Querystring: Static<typeof WindowQuery> }>) => {
        const value = request.params[param] ?? '';
        if (kind === 'ip' && parseAddress(value) === undefined) {
          const message = `${value} is not an IP address`;
          throw new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field: 'ip', message }] });
        }
        const accountId = requestAccount(request).account.id;
        const window = windowOf(request.query, deps.clock.now());
        const entity: EntityRef = { kind, value };
        const [activity, alerts] = await Promise.all([
          deps.store.entities.activity(accountId, entity, window),
          deps.store.entities.alerts(accountId, entity, window, RECENT_ALERTS),
        ]);
        return {
          kind,
          id: value,
          since: new Date(window.since).toISOString(),
          until: new Date(window.until).toISOString(),
          bucket_ms: window.bucketMs,
          ...activityView(activity),
          alerts: alerts.total,
          open_alerts: alerts.open,
          ...distributions(entity, activity.sample),
          ...(kind === 'ip' ? { network: networkView(value, deps.lookUpAddress?.(value), activity.sample) } : {}),
          alerts_recent: await alertViewsWithAssignees(deps.store.members, alerts.recent),
          sampled_events: activity.sample.length,
          partial: activity.capped,
        };
      },
    });
  }
}
