import type { AccountContext } from '../event/account.js';
import type { Rejection } from '../event/rejection.js';
import type { LimitDecision, RateLimiter, WindowStatus } from '../limits/types.js';
import type { Limited, Validated } from './request.js';
import { Exit, type Stage } from './stage.js';

export type WindowsOutcome =
  { readonly ok: true; readonly status: WindowStatus } | { readonly ok: false; readonly status: WindowStatus; readonly rejection: Rejection };

/** Takes a request's events from the key's per-minute window and one request from its per-second window. */
export type KeyWindows = (ctx: AccountContext, events: number, now: number) => Promise<WindowsOutcome>;

export function keyWindows(limiter: RateLimiter): KeyWindows {
  return async (ctx, events, now) => {
    const decision: LimitDecision = await limiter.consumeKey(ctx.keyId, ctx.plan, events, now);
    if (decision.allowed) return { ok: true, status: decision.status };
    const seconds = decision.retryAfter;
    const message = `Rate limit exceeded. Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`;
    return { ok: false, status: decision.status, rejection: { code: 'RATE_LIMITED', message, retryAfter: seconds } };
  };
}

/** The key's windows: over either, the request ends with a 429 before any work is spent on it. */
export function limitStage(windows: KeyWindows): Stage<Validated, Limited> {
  return async (request) => {
    const { events } = request;
    const outcome = await windows(request.account, events.length, request.now);
    if (!outcome.ok) return new Exit({ ok: false, limit: outcome.status, rejection: outcome.rejection }, 'rejected_rate_limited', events.length);
    return Object.assign(request, { limit: outcome.status });
  };
}
