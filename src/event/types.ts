/**
 * The types an event gains as it moves through the ingestion pipeline:
 *   unknown JSON -> ValidatedEvent -> ClassifiedEvent -> EnrichedEvent -> DetectedEvent -> ScoredEvent
 * One object travels through the stages: each adds its own fields to it (Object.assign, typed as
 * the wider type) and never changes a field an earlier stage set, except `alerts`, which the
 * threat models' stage extends with theirs, and the identifiers, metadata and user agent, which
 * the minimise stage replaces by what the account keeps of them. Copying the event at every stage cost more CPU and
 * garbage than any stage's own work on it.
 */
import type { Classification } from './classification.js';
import type { Enrichment } from './enrichment.js';
import type { AlertHit, StandingAlert } from './alert.js';
import type { Risk } from './risk.js';

export interface RequestInfo {
  readonly method?: string;
  readonly path?: string;
  readonly status?: number;
  readonly query?: string;
}

/** An event that passed validation: every field typed, defaults applied. */
export interface ValidatedEvent {
  readonly type: string;
  readonly eventId?: string;
  /**
   * With an eventId: SHA-256 (hex) of the event as sent, as canonical JSON (keys sorted, no
   * whitespace, every field the client sent). The same key with another digest is a conflict.
   */
  readonly payloadDigest?: string;
  /** Event time (ms since epoch): detectors use this, not arrival time. */
  readonly occurredAt: number;
  readonly receivedAt: number;
  readonly actorId?: string;
  readonly email?: string;
  readonly ip?: string;
  readonly userAgent?: string;
  readonly sessionId?: string;
  readonly host?: string;
  readonly request?: RequestInfo;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Transient: checked during enrichment, never stored, logged or echoed. */
  readonly passwordSha1?: string;
  /**
   * Transient: the address and actor id as sent, when the minimise stage replaced them
   * (src/privacy/minimise.ts). Read by allowlists and by the network a login is counted under;
   * never stored, logged, echoed or written to detection state.
   */
  readonly sent?: { readonly ip?: string; readonly actorId?: string };
}

export interface ClassifiedEvent extends ValidatedEvent {
  readonly classification: Classification;
}

export interface EnrichedEvent extends ClassifiedEvent {
  readonly enrichment: Enrichment;
}

export interface DetectedEvent extends EnrichedEvent {
  /** The built-in detectors' alerts, then the account's threat models'. */
  readonly alerts: readonly AlertHit[];
  /** An open alert of an earlier event on the same actor or session, when one stands. */
  readonly standing?: StandingAlert;
}

export interface ScoredEvent extends DetectedEvent {
  readonly id: string;
  readonly risk: Risk;
}
