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
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const state = request.vigil ?? {};
    const account = state.account;
    if (account && !state.counted) {
      state.counted = true;
      const decision = await limiter.consumeKey(account.keyId, account.plan, 0, clock.now());
      if (!reply.hasHeader('X-RateLimit-Limit')) setRateLimitHeaders(reply, decision.status);
      return payload;
    }
    if (reply.hasHeader('X-RateLimit-Limit')) return payload;
    const status = account ? await limiter.peekKey(account.keyId, account.plan, clock.now()) : state.rateLimit;
    if (status) setRateLimitHeaders(reply, status);
    return payload;
  };
}
