import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter, WindowStatus } from '../limits/types.js';
import type { Clock } from '../util/clock.js';
import './context.js';

/**
 * X-RateLimit-* (the per-minute window, or the address's window without a key) and, for a key,
 * `RateLimit-Policy` and `RateLimit` (the structured fields of the IETF httpapi draft) naming
 * both of its windows: `"second"` counts requests, `"minute"` counts events. `t` is the whole
 * seconds until the window's oldest counted unit leaves it, rounded up (0 when it is empty), so a
 * client that waits `t` never meets a window fuller than it was told.
 */
export function setRateLimitHeaders(reply: FastifyReply, status: WindowStatus, now: number): void {
  reply.header('X-RateLimit-Limit', String(status.limit));
  reply.header('X-RateLimit-Remaining', String(status.remaining));
  reply.header('X-RateLimit-Reset', String(status.resetAt));
  const second = status.second;
  if (second === undefined) return;
  reply.header('RateLimit-Policy', `"second";q=${second.limit};w=1, "minute";q=${status.limit};w=60`);
  reply.header('RateLimit', `"second";r=${second.remaining};t=${secondsLeft(second, now)}, "minute";r=${status.remaining};t=${secondsLeft(status, now)}`);
}

/** Whole seconds until the window's oldest unit leaves (its reset second, counted from the current second); 0 when it holds nothing. */
function secondsLeft(status: WindowStatus, now: number): number {
  if (status.remaining >= status.limit) return 0;
  return Math.max(0, status.resetAt - Math.floor(now / 1_000));
}

/**
 * onSend hook of the ingestion routes: every response, errors included, carries
 * X-RateLimit-*. With a known key they describe the key's per-minute window, and RateLimit-Policy
 * and RateLimit describe both of its windows; without one, X-RateLimit-* describe the source
 * address's window. Every request that passed authentication counts as one
 * request in the key's per-second window whatever its outcome: one rejected before the
 * pipeline ran (bad JSON, wrong media type, body too large, origin refused) is counted here.
 */
export function rateLimitHeaderHook(limiter: RateLimiter, clock: Clock) {
  // Callback style: an accepted event already carries its headers and is already counted, and an
  // async hook would cost it a promise on every request.
  return (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void => {
    const state = request.vigil ?? {};
    const account = state.account;
    const fail = (err: Error) => done(err);
    if (account && !state.counted) {
      state.counted = true;
      limiter.consumeKey(account.keyId, account.plan, 0, clock.now()).then((decision) => {
        if (!reply.hasHeader('X-RateLimit-Limit')) setRateLimitHeaders(reply, decision.status, clock.now());
        done(null, payload);
      }, fail);
      return;
    }
    if (reply.hasHeader('X-RateLimit-Limit')) return done(null, payload);
    if (!account) {
      if (state.rateLimit) setRateLimitHeaders(reply, state.rateLimit, clock.now());
      return done(null, payload);
    }
    limiter.peekKey(account.keyId, account.plan, clock.now()).then((status) => {
      setRateLimitHeaders(reply, status, clock.now());
      done(null, payload);
    }, fail);
  };
}
