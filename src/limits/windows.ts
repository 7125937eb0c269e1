/**
 * Shapes of the sliding windows and the arithmetic every limiter implementation shares
 * (the Redis Lua scripts mirror it; the contract suite checks they agree).
 *
 * A window of span S is a ring of `buckets` buckets of `bucketMs` each, with
 * buckets * bucketMs = S + bucketMs. A unit counted at time t sits in bucket
 * floor(t / bucketMs) and is counted while floor(now / bucketMs) - bucket < buckets, so
 * it stays counted for at least S (never fewer: no S-long interval, open or closed, at
 * any real start, holds more than the limit) and at most S + bucketMs (the tolerance:
 * a request may be refused although the units that block it are between S and
 * S + bucketMs old).
 */
export interface WindowShape {
  readonly bucketMs: number;
  readonly buckets: number;
  /** The span the window guarantees, in ms. */
  readonly spanMs: number;
}

/** Per-minute window: one-second buckets over 61 s. */
export const MINUTE_WINDOW: WindowShape = Object.freeze({ bucketMs: 1_000, buckets: 61, spanMs: 60_000 });
/** Per-second window: 100 ms buckets over 1.1 s. */
export const SECOND_WINDOW: WindowShape = Object.freeze({ bucketMs: 100, buckets: 11, spanMs: 1_000 });

/** Whole seconds, at least 1, from `now` until `atMs`. */
export function secondsUntil(atMs: number, now: number): number {
  return Math.max(1, Math.ceil((atMs - now) / 1_000));
}

/** The unix second to report as X-RateLimit-Reset for an empty window. */
export function unixSecond(now: number): number {
  return Math.ceil(now / 1_000);
}
