import type { FastifyInstance } from 'fastify';
import type { Store } from '../storage/store.js';
import type { Clock } from '../util/clock.js';

/** The endpoints a publishable key may call from a browser. */
const BROWSER_ROUTES = ['/v1/events', '/v1/events/batch'] as const;

/**
 * Origins allowed on any active publishable key. A preflight carries no key, so the only
 * question it can answer is whether some key admits the origin; the real request is then
 * checked against its own key's origins (guards.ts). Cached for `ttlMs` like keys are.
 */
export class AllowedOrigins {
  private origins: ReadonlySet<string> = new Set();
  private expiresAt = 0;

  constructor(
    private readonly store: Store,
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

/** CORS preflight (OPTIONS) for the browser ingestion endpoints: 204, with CORS headers only for allowed origins. */
export function registerCorsPreflight(app: FastifyInstance, origins: AllowedOrigins): void {
  for (const url of BROWSER_ROUTES) {
    app.options(url, { schema: { hide: true } as never }, async (request, reply) => {
      const origin = request.headers.origin;
      reply.header('Vary', 'Origin');
      if (typeof origin === 'string' && (await origins.allows(origin))) {
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Access-Control-Allow-Methods', 'POST');
        reply.header('Access-Control-Allow-Headers', 'Authorization, X-API-Key, Content-Type');
        reply.header('Access-Control-Max-Age', '600');
      }
      reply.code(204).send();
    });
  }
}
