import type { VigilError } from './errors.js';

/** An event as the service accepts it: `event` is required, everything else optional. */
export interface VigilEvent {
  event: string;
  event_id?: string;
  timestamp?: string | number;
  actor_id?: string;
  email?: string;
  ip?: string;
  user_agent?: string;
  session_id?: string;
  host?: string;
  request?: { method?: string; path?: string; status?: number; query?: string };
  metadata?: Record<string, unknown>;
  password_sha1?: string;
  [field: string]: unknown;
}

/** Time as the client sees it. Tests inject a fake one to prove the cooldown rules without waiting. */
export interface Clock {
  now(): number;
  /** Runs `fn` once after `ms`; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
}

export type Sleep = (ms: number) => Promise<void>;

/**
 * What one HTTP attempt produced: an answer (any status) or none at all. `policy` is the
 * answer's `RateLimit-Policy` field, which the client paces by; `retryAfter` its `Retry-After`
 * field, which makes a 503 an overload answer.
 */
export type Answer =
  | { readonly kind: 'answer'; readonly status: number; readonly body: string; readonly policy?: string | null; readonly retryAfter?: string | null }
  | { readonly kind: 'no-answer'; readonly reason: string };

/** Sends one request; never throws (a failure is a `no-answer`). */
export type Send = (url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number) => Promise<Answer>;

export interface ClientOptions {
  /** Secret (`vgl_sk_…`) or publishable (`vgl_pk_…`) key. */
  apiKey: string;
  /** Where the service listens. Default `http://localhost:8080`. */
  baseUrl?: string;
  /** Per-attempt timeout in milliseconds (real time). Default 2000. */
  timeoutMs?: number;
  /** Retries after the first attempt for 5xx answers, network errors and timeouts. Default 2. */
  maxRetries?: number;
  /** Events per batch request: the plan's batch size (Starter 50, Pro and Business 100). Default 100. */
  batchSize?: number;
  /** `direct` sends each call at once; `buffered` collects events and sends them in batches. Default `direct`. */
  mode?: 'direct' | 'buffered';
  /** Buffered mode: send when this many events wait. Default 100. */
  bufferSize?: number;
  /** Buffered mode: send this long after the first event entered an empty buffer. Default 5000. */
  flushIntervalMs?: number;
  /** Base of the retry backoff: attempt n waits a random time between half and all of `retryBaseMs × 2^n`. Default 200. */
  retryBaseMs?: number;
  /**
   * Longest wait, in ms, for a request that the key's rate-limit policies cannot take now;
   * beyond it the request's events are dropped (stats `pacedDropped`). 0 never waits. Default 1000.
   */
  maxPacingDelayMs?: number;
  /** Called with a `VigilError` for every event (or batch) that was not delivered; what it throws is ignored. */
  onError?: (error: VigilError) => void;
  /** `track` and `trackBatch` reject with a `VigilError` when an event was not delivered (default: they resolve to the result). */
  throwOnError?: boolean;
  /** Sent as `User-Agent` where the platform allows it (the Node client sends `vigil-node/<version>`). */
  userAgent?: string;
  /** Time for the cooldown, pacing and flush timers; inject a fake one to test without waiting. Default: the system clock. */
  clock?: Clock;
  /** The wait used for retry backoff and pacing. Default: a real timer. */
  sleep?: Sleep;
  random?: () => number;
  send?: Send;
}

export type Outcome = 'accepted' | 'rejected' | 'failed' | 'rate_limited' | 'dropped' | 'buffered';

/** One contribution to a risk score, as the service explains it. */
export interface RiskContribution {
  readonly source: string;
  readonly points: number;
}

export interface RiskDecision {
  readonly score: number;
  readonly level: 'low' | 'medium' | 'high' | 'critical';
  readonly action: 'allow' | 'challenge' | 'block';
  /** What made the score, largest part first as the service lists it (empty when the answer has none). */
  readonly breakdown: readonly RiskContribution[];
}

export interface TrackResult {
  readonly outcome: Outcome;
  /** HTTP status of the last answer, or null when there was none. */
  readonly status: number | null;
  /** The service's risk decision for a delivered event, or null. */
  readonly risk: RiskDecision | null;
  readonly eventId: string;
}

/** Events of one `trackBatch` call, by what happened to them. */
export interface BatchResult {
  accepted: number;
  rejected: number;
  failed: number;
  rateLimited: number;
  dropped: number;
  buffered: number;
}

export interface ClientStats {
  /** Events that went out in at least one request (each once, whatever its retries). */
  readonly sent: number;
  /** Events answered 2xx. */
  readonly accepted: number;
  /** Events answered a 4xx that is not retried. */
  readonly rejected: number;
  /** Events given up after the retries (5xx, network errors, timeouts), probes without answer, and events not sent during an overload pause. */
  readonly failed: number;
  /** Events in requests answered 429. */
  readonly rateLimited: number;
  /** Events not sent: a cooldown, a 429 that stopped their call, or pacing beyond `maxPacingDelayMs`. */
  readonly dropped: number;
  /** Events whose request waited for the key's rate-limit policies before it was sent. */
  readonly paced: number;
  /** Events not sent because their request would have waited longer than `maxPacingDelayMs` (also in `dropped`). */
  readonly pacedDropped: number;
  /** Retry requests sent. */
  readonly retries: number;
  /** Probe requests sent during cooldowns. */
  readonly probes: number;
  readonly inCooldown: boolean;
}
