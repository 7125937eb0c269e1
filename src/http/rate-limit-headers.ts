import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter, WindowStatus } from '../limits/types.js';
import type { Clock } from '../util/clock.js';
import './context.js';

export function setRateLimitHeaders(reply: FastifyReply, status: WindowStatus): void {
  reply.header('X-RateLimit-Limit', String(status.limit));
  reply.header('X-RateLimit-Remaining', String(status.remaining));
  reply.header('X-RateLimit-Reset', String(status.resetAt));
}

/**
 * onSend hook of the ingestion routes: every response, errors included, carries
 * X-RateLimit-*. With a known key they describe the key's per-minute window; without one,
 * the source address's window. Every request that passed authentication counts as one
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
        if (!reply.hasHeader('X-RateLimit-Limit')) setRateLimitHeaders(reply, decision.status);
        done(null, payload);
      }, fail);
      return;
    }
    if (reply.hasHeader('X-RateLimit-Limit')) return done(null, payload);
    if (!account) {
      if (state.rateLimit) setRateLimitHeaders(reply, state.rateLimit);
      return done(null, payload);
    }
    limiter.peekKey(account.keyId, account.plan, clock.now()).then((status) => {
      setRateLimitHeaders(reply, status);
      done(null, payload);
    }, fail);
  };
}
