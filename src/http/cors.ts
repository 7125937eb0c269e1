import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AccountStore } from '../storage/store.js';
import type { Clock } from '../util/clock.js';

/** Headers a browser script may read on an ingestion answer (rate-limit state, retry hints). */
const EXPOSED = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit-Policy, RateLimit, Retry-After, X-Request-Id, Idempotent-Replay';
const BROWSER_ROUTES = ['/v1/events', '/v1/events/batch'];

/** Marks a response as readable by `origin` (called once the key's allowed origins are checked). */
export function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Access-Control-Expose-Headers', EXPOSED);
  reply.header('Vary', 'Origin');
}

/**
 * Origins allowed on any active publishable key. A preflight carries no API key, so the
 * only question it can answer is whether some key admits the origin; the real request is
 * then checked against its own key's origins (guards.ts, 403 otherwise). Cached for
 * `ttlMs` like keys are; key changes through this process invalidate at once.
 */
export class AllowedOrigins {
  private origins: ReadonlySet<string> = new Set();
  private expiresAt = 0;

  constructor(
    private readonly store: Pick<AccountStore, 'listKeys'>,
    private readonly clock: Clock,
    private readonly ttlMs = 2_000,
  ) {}

  async allows(origin: string): Promise<boolean> {
    const now = this.clock.now();
    if (now >= this.expiresAt) {
      const keys = await this.store.listKeys();
      this.origins = new Set(keys.filter((k) => k.kind === 'publishable' && k.revokedAt === null).flatMap((k) => k.allowedOrigins));
      this.expiresAt = now + this.ttlMs;
    }
    return this.origins.has(origin) || this.origins.has('*');
  }

  invalidate(): void {
    this.expiresAt = 0;
  }
}

/**
 * CORS preflight for the ingestion routes: 204, with Access-Control-Allow-* only for an
 * origin some active publishable key allows (a browser then refuses other origins before
 * sending anything). Register before the 405 tracker so OPTIONS stays out of the Allow lists.
 */
export function registerCorsPreflight(app: FastifyInstance, origins: AllowedOrigins): void {
  for (const url of BROWSER_ROUTES) {
    app.options(url, { schema: { hide: true } }, async (request, reply) => {
      const origin = request.headers.origin;
      reply.header('Vary', 'Origin');
      if (typeof origin === 'string' && (await origins.allows(origin))) {
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Access-Control-Allow-Methods', 'POST');
        reply.header('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-API-Key');
        reply.header('Access-Control-Max-Age', '600');
      }
      reply.header('Allow', 'POST, OPTIONS');
      reply.code(204);
      return null;
    });
  }
}
