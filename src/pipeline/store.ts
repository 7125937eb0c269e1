import type { AccountContext } from './account-context.js';
import type { ScoredEvent } from './types.js';
import type { EventRow } from '../storage/types.js';
import { isoTime } from '../util/iso-time.js';

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

const NO_TAGS: readonly string[] = Object.freeze([]);
const tagsOf = (event: ScoredEvent): readonly string[] => (event.classification.inferred.length === 0 ? NO_TAGS : event.classification.inferred.map((t) => `inferred:${t}`));

/** The catalog hands out one family set per combination: its array form is made once, not per event. */
const familyArrays = new WeakMap<ReadonlySet<string>, readonly string[]>();
function familiesOf(families: ReadonlySet<string>): readonly string[] {
  let list = familyArrays.get(families);
  if (list === undefined) {
    list = Object.freeze([...families]);
    familyArrays.set(families, list);
  }
  return list;
}

export function toEventResult(event: ScoredEvent, degraded = false): EventResult {
  return {
    ...(degraded ? { degraded: true as const } : {}),
    id: event.id,
    status: 'accepted',
    received_at: isoTime(event.receivedAt),
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
    timestamp: isoTime(event.occurredAt),
    received_at: isoTime(event.receivedAt),
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
      families: familiesOf(event.classification.families),
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
