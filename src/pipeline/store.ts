import type { AccountContext } from './account-context.js';
import type { ScoredEvent } from './types.js';
import type { EventRow } from '../storage/types.js';

/** The 202 answer for one event (design 3.2). */
export type EventResult =
  | {
      readonly id: string;
      readonly status: 'accepted';
      readonly received_at: string;
      readonly risk: ScoredEvent['risk'];
      readonly tags: readonly string[];
      readonly alerts: readonly { readonly id: string; readonly type: string; readonly severity: string }[];
      /** Present when shared state (Redis) was unreachable: limits and detection used this instance's local state. */
      readonly degraded?: true;
    }
  | { readonly status: 'dropped' };

const tagsOf = (event: ScoredEvent): string[] => event.classification.inferred.map((t) => `inferred:${t}`);

export function toEventResult(event: ScoredEvent, degraded = false): EventResult {
  return {
    ...(degraded ? { degraded: true as const } : {}),
    id: event.id,
    status: 'accepted',
    received_at: new Date(event.receivedAt).toISOString(),
    risk: event.risk,
    tags: tagsOf(event),
    alerts: event.alerts.map((a) => ({ id: a.id, type: a.type, severity: a.severity })),
  };
}

/** The persisted document: what the event said, what Vigil added; never the password hash. */
export function toEventRow(event: ScoredEvent, ctx: AccountContext, result: EventResult): EventRow {
  const tags = result.status === 'accepted' ? result.tags : [];
  const doc: Record<string, unknown> = {
    id: event.id,
    event: event.type,
    event_id: event.eventId,
    timestamp: new Date(event.occurredAt).toISOString(),
    received_at: new Date(event.receivedAt).toISOString(),
    actor_id: event.actorId,
    email: event.email,
    ip: event.ip,
    user_agent: event.userAgent,
    session_id: event.sessionId,
    host: event.host,
    request: event.request,
    metadata: event.metadata,
    classification: {
      predefined: event.classification.predefined,
      base_score: event.classification.baseScore,
      families: [...event.classification.families],
    },
    enrichment: event.enrichment,
    risk: event.risk,
    tags,
    alerts: result.status === 'accepted' ? result.alerts : [],
    degraded: result.status === 'accepted' ? result.degraded : undefined,
  };
  return {
    id: event.id,
    accountId: ctx.account.id,
    type: event.type,
    eventId: event.eventId ?? null,
    occurredAt: event.occurredAt,
    receivedAt: event.receivedAt,
    actorId: event.actorId ?? null,
    ip: event.ip ?? null,
    riskScore: event.risk.score,
    tags,
    doc,
  };
}
