import type { LimitDecision, LimitReason, WindowStatus } from './types.js';
import { unixSecond } from './windows.js';

/** Status of a window holding `used` of `limit`; `oldestLeavesAt` in ms, or -1 when empty; `second`: a key's per-second window. */
export function windowStatus(limit: number, used: number, oldestLeavesAt: number, now: number, second?: WindowStatus): WindowStatus {
  const remaining = Math.max(0, limit - used);
  const resetAt = oldestLeavesAt < 0 ? unixSecond(now) : Math.ceil(oldestLeavesAt / 1_000);
  return second === undefined ? { limit, remaining, resetAt } : { limit, remaining, resetAt, second };
}

export function allowed(status: WindowStatus): LimitDecision {
  return { allowed: true, status };
}

/** A 429: the per-minute window's Remaining is 0 on every rejection; the per-second window says what it holds. */
export function rejected(status: WindowStatus, retryAfter: number, reason: LimitReason): LimitDecision {
  const { limit, resetAt, second } = status;
  const refused: WindowStatus = second === undefined ? { limit, remaining: 0, resetAt } : { limit, remaining: 0, resetAt, second };
  return { allowed: false, status: refused, retryAfter, reason };
}
