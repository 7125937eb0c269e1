import type { FastifyInstance, FastifyReply } from 'fastify';

/** Headers a browser script may read on an ingestion answer (rate-limit state, retry hints). */
const EXPOSED = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id';
const BROWSER_ROUTES = ['/v1/events', '/v1/events/batch'];

/** Marks a response as readable by `origin` (called once the key's allowed origins are checked). */
export function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Access-Control-Expose-Headers', EXPOSED);
  reply.header('Vary', 'Origin');
}

/**
 * CORS preflight for the ingestion routes. A preflight carries no API key, so it cannot be
 * judged against a key's allowed origins; it is answered for any origin and the real
 * request is checked (403 FORBIDDEN for an origin the publishable key does not allow).
 * Register before the 405 tracker so OPTIONS stays out of the Allow lists.
 */
export function registerCorsPreflight(app: FastifyInstance): void {
  for (const url of BROWSER_ROUTES) {
    app.options(url, { schema: { hide: true } as never }, async (request, reply) => {
      const origin = request.headers.origin;
      if (origin !== undefined) {
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Access-Control-Allow-Methods', 'POST');
        reply.header('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-API-Key');
        reply.header('Access-Control-Max-Age', '600');
        reply.header('Vary', 'Origin');
      }
      reply.header('Allow', 'POST, OPTIONS');
      reply.code(204);
      return null;
    });
  }
}
