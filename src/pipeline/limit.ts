import type { AccountContext } from '../event/account.js';
import type { Rejection } from '../event/rejection.js';
import type { LimitDecision, RateLimiter, WindowStatus } from '../limits/types.js';

export type LimitOutcome =
  { readonly ok: true; readonly status: WindowStatus } | { readonly ok: false; readonly status: WindowStatus; readonly rejection: Rejection };

/** Takes a request's events from the key's per-minute window and one request from its per-second window. */
export type LimitStage = (ctx: AccountContext, events: number, now: number) => Promise<LimitOutcome>;

export function createLimitStage(limiter: RateLimiter): LimitStage {
  return async (ctx, events, now) => {
    const decision: LimitDecision = await limiter.consumeKey(ctx.keyId, ctx.plan, events, now);
    if (decision.allowed) return { ok: true, status: decision.status };
    const seconds = decision.retryAfter;
    const message = `Rate limit exceeded. Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`;
    return { ok: false, status: decision.status, rejection: { code: 'RATE_LIMITED', message, retryAfter: seconds } };
  };
}
