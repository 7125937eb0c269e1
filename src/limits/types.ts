/**
 * Contracts of the rate limiter and the monthly quota. Async so that the Redis
 * implementations can answer each request's checks in one round trip; the in-memory
 * implementations are the embedded default. One contract suite covers both.
 */

/** State of the window reported in X-RateLimit-* headers. */
export interface WindowStatus {
  readonly limit: number;
  readonly remaining: number;
  /** Unix second at which the oldest counted unit leaves the window (now when the window is empty). */
  readonly resetAt: number;
  /**
   * A key's per-second window of requests, beside the per-minute window of events that the
   * fields above describe (present on key windows, absent on an address's window).
   */
  readonly second?: WindowStatus;
}

export type LimitReason = 'key_minute' | 'key_second' | 'ip_minute';

export type LimitDecision =
  | { readonly allowed: true; readonly status: WindowStatus }
  | {
      readonly allowed: false;
      readonly status: WindowStatus;
      /** Whole seconds (>= 1) until the rejected request would fit in the window that rejected it. */
      readonly retryAfter: number;
      readonly reason: LimitReason;
    };

export interface KeyLimits {
  /** Events per minute. */
  readonly rpm: number;
  /** Requests per second. */
  readonly eps: number;
}

export interface RateLimiter {
  /** Counts one request against the source address's per-minute cap. */
  hitIp(ip: string, perMinute: number, now: number): Promise<LimitDecision>;
  /**
   * Takes `events` from the key's per-minute window and one request from its per-second
   * window, both or neither. `status` describes the per-minute window, and `status.second`
   * the per-second window.
   */
  consumeKey(keyId: string, limits: KeyLimits, events: number, now: number): Promise<LimitDecision>;
  /** The key's windows, counting nothing (headers on responses that consumed nothing). */
  peekKey(keyId: string, limits: KeyLimits, now: number): Promise<WindowStatus>;
  close(): Promise<void>;
}

export interface QuotaPlan {
  readonly monthlyCap: number;
  readonly overage: 'drop' | 'bill';
}

export interface QuotaDecision {
  /** Events to process (the first `accepted` of the request, in order). */
  readonly accepted: number;
  /** Events dropped because a `drop` plan reached its cap. */
  readonly dropped: number;
}

export interface QuotaCounter {
  /** Reserves `events` in the account's month (`YYYY-MM`, UTC). */
  reserve(accountId: string, period: string, events: number, plan: QuotaPlan): Promise<QuotaDecision>;
  /** Gives back a reservation whose events were not stored (storage failure). */
  release(accountId: string, period: string, decision: QuotaDecision): Promise<void>;
  /** Counters for the month, as the quota sees them now. */
  current(accountId: string, period: string): Promise<{ readonly used: number; readonly dropped: number }>;
  /**
   * Adds counts taken elsewhere (by a stand-in while this counter was unreachable) to a
   * month this counter already holds; a month it does not hold is left alone, because it
   * will be seeded from the store, which has them. Counts may be negative (releases).
   */
  absorb?(accountId: string, period: string, counts: { readonly used: number; readonly dropped: number }): Promise<void>;
  close(): Promise<void>;
}

/** Loads the persisted counters of a month the first time a quota counter needs them. */
export type UsageSeed = (accountId: string, period: string) => Promise<{ used: number; dropped: number }>;

export { isoMonth as monthOf, isoDay as dayOf } from '../util/iso-time.js';
