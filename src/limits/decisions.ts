import type { LimitDecision, LimitReason, WindowStatus } from './types.js';
import { unixSecond } from './windows.js';

/** Status of a window holding `used` of `limit`; `oldestLeavesAt` in ms, or -1 when empty. */
export function windowStatus(limit: number, used: number, oldestLeavesAt: number, now: number): WindowStatus {
  return {
    limit,
    remaining: Math.max(0, limit - used),
    resetAt: oldestLeavesAt < 0 ? unixSecond(now) : Math.ceil(oldestLeavesAt / 1_000),
  };
}

export function allowed(status: WindowStatus): LimitDecision {
  return { allowed: true, status };
}

/** A 429: Remaining is 0 on every rejection. */
export function rejected(status: WindowStatus, retryAfter: number, reason: LimitReason): LimitDecision {
  return { allowed: false, status: { limit: status.limit, remaining: 0, resetAt: status.resetAt }, retryAfter, reason };
}
