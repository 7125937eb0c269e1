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
 * X-RateLimit-*. With a known key they describe the key's per-minute window (peeked when
 * the request never reached the limiter); without one, the source address's window.
 */
export function rateLimitHeaderHook(limiter: RateLimiter, clock: Clock) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.hasHeader('X-RateLimit-Limit')) return payload;
    const state = request.vigil ?? {};
    const status = state.account ? await limiter.peekKey(state.account.keyId, state.account.plan, clock.now()) : state.rateLimit;
    if (status) setRateLimitHeaders(reply, status);
    return payload;
  };
}
