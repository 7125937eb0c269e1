import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../limits/types.js';
import type { Clock } from '../util/clock.js';
import { presentedKey, type Authenticator } from './authenticator.js';
import './context.js';
import { allowOrigin } from './cors.js';
import { ApiError, type Rejection } from './errors.js';
import type { SessionAuthenticator } from './session-auth.js';

/** Who may call a route. `ingest`: any valid key; `read`: secret keys only. */
export type Access = 'public' | 'ingest' | 'read' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
}

export interface GuardDeps {
  readonly authenticator: Authenticator;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly ipLimitFor: (ip: string) => number;
  readonly adminToken?: string;
  readonly checkAdminToken: (presented: string | undefined) => boolean;
  /** Dashboard sessions: a request with the session cookie and no key. */
  readonly sessions?: SessionAuthenticator;
}

function rateLimited(seconds: number, scope: string): Rejection {
  return { code: 'RATE_LIMITED', message: `Rate limit exceeded (${scope}). Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`, retryAfter: seconds };
}

/**
 * The request lifecycle's first step, before any body is read:
 *   1. per-IP cap on every /v1 request (also with bad keys, so key guessing is capped);
 *   2. authentication by API key (or admin token on /admin);
 *   3. key kind and browser origin checks.
 * The per-IP cap runs before authentication (design 9 lists it after): an address over
 * its cap must not learn whether the keys it tries are valid.
 */
export function registerGuards(app: FastifyInstance, deps: GuardDeps): void {
  app.decorateRequest('vigil', null as never);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    request.vigil = {};
    const access = request.routeOptions.config?.access ?? 'public';
    if (request.url.startsWith('/v1/')) {
      const ip = request.ip;
      const decision = await deps.limiter.hitIp(ip, deps.ipLimitFor(ip), deps.clock.now());
      request.vigil.rateLimit = decision.status;
      if (!decision.allowed) {
        reply.header('Retry-After', String(decision.retryAfter));
        throw new ApiError(rateLimited(decision.retryAfter, 'per source address'));
      }
    }
    if (access === 'admin') {
      if (!deps.adminToken) throw new ApiError({ code: 'NOT_FOUND', message: 'The admin API is disabled: set VIGIL_ADMIN_TOKEN to enable it.' });
      if (!deps.checkAdminToken(presentedKey(request.headers))) throw new ApiError({ code: 'UNAUTHORIZED', message: 'Missing or wrong admin token.' });
      return;
    }
    if (access !== 'ingest' && access !== 'read') return;
    const auth = (await deps.sessions?.authenticate(request)) ?? (await deps.authenticator.authenticate(presentedKey(request.headers)));
    if (!auth.ok) throw new ApiError({ code: 'UNAUTHORIZED', message: auth.message });
    request.vigil.account = auth.ctx;
    request.vigil.allowedOrigins = auth.allowedOrigins;
    if (access === 'read' && auth.ctx.keyKind !== 'secret') {
      throw new ApiError({ code: 'FORBIDDEN', message: 'Publishable keys can only send events; use a secret key to read or manage.' });
    }
    const origin = request.headers.origin;
    if (auth.ctx.keyKind === 'publishable' && origin !== undefined) {
      if (!auth.allowedOrigins.includes(origin) && !auth.allowedOrigins.includes('*')) {
        throw new ApiError({ code: 'FORBIDDEN', message: `Origin ${origin} is not allowed for this publishable key.` });
      }
      allowOrigin(reply, origin);
    }
  });
}
