import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../limits/types.js';
import type { Clock } from '../util/clock.js';
import { beaconKey, bearerToken, presentedKey, type Authenticator } from './authenticator.js';
import './context.js';
import { allowOrigin } from './cors.js';
import { ApiError } from './errors.js';
import type { Rejection } from '../event/rejection.js';
import { ROLES, type KeyScope, type Principal, type Role } from '../event/account.js';
import type { FailureThrottle } from './failure-throttle.js';
import type { SessionAuthenticator } from './session-auth.js';

/**
 * Who may call a route: the key scope or the least role it needs (`permits` below). `public`:
 * anyone; `admin`: the operator's admin token (/admin only).
 */
export type Access = 'public' | 'ingest' | 'any' | 'read' | 'triage' | 'manage' | 'subjects' | 'people' | 'self' | 'admin';

/** The routes a key or a session may call at all (the rest are public or the admin API's). */
const AUTHENTICATED: ReadonlySet<Access> = new Set(['ingest', 'any', 'read', 'triage', 'manage', 'subjects', 'people', 'self']);

/** The key scope each access needs; undefined: keys are refused (only a signed-in person may). */
const SCOPE_NEEDED: Readonly<Record<Exclude<Access, 'public' | 'admin'>, KeyScope | 'any' | undefined>> = {
  ingest: 'ingest',
  any: 'any',
  read: 'read',
  triage: 'manage',
  manage: 'manage',
  subjects: 'subjects',
  people: undefined,
  self: undefined,
};

/** The least role each access needs; undefined: people are refused (events come from applications). */
const ROLE_NEEDED: Readonly<Record<Exclude<Access, 'public' | 'admin'>, Role | undefined>> = {
  ingest: undefined,
  any: 'viewer',
  read: 'viewer',
  triage: 'analyst',
  manage: 'admin',
  subjects: 'admin',
  people: 'admin',
  self: 'viewer',
};

/** True when `role` is `least` or above it. */
export const roleAtLeast = (role: Role, least: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(least);

/** Why this principal may not call a route of this access, or undefined when it may. */
export function refusal(principal: Principal, access: Exclude<Access, 'public' | 'admin'>): string | undefined {
  if (principal.kind === 'key') {
    const scope = SCOPE_NEEDED[access];
    if (scope === undefined) return 'Only a person signed in to the dashboard can do this; API keys cannot.';
    if (scope === 'any' || principal.scopes.includes(scope)) return undefined;
    if (scope !== 'ingest' && principal.scopes.length === 1 && principal.scopes[0] === 'ingest')
      return 'This key can only send events; use a key with the "' + scope + '" scope to read or manage.';
    return `This key lacks the "${scope}" scope.`;
  }
  const least = ROLE_NEEDED[access];
  if (least === undefined) return 'Events are sent with an API key, not from a dashboard session.';
  if (roleAtLeast(principal.role, least)) return undefined;
  return `Your role (${principal.role}) cannot do this; it needs ${least} or above.`;
}

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
  /** Failed admin authentications per source; past its limit a source's wrong tokens answer 429. */
  readonly adminFailures: FailureThrottle;
  /** Called on each wrong or missing admin token: counted against its source ('wrong_token') or past the source's limit ('throttled'). */
  readonly onAdminFailure?: (outcome: 'wrong_token' | 'throttled') => void;
  /** Dashboard sessions: a request with the session cookie and no key. */
  readonly sessions?: SessionAuthenticator;
}

/**
 * Failed admin authentications answered 401 per source (an IPv4 address, an IPv6 /64) and
 * minute; the sources remembered at once are bounded (each holds at most 10 times).
 */
export const ADMIN_FAILURE_LIMITS = { perSource: 10, windowMs: 60_000, maxSources: 10_000 } as const;

function rateLimited(seconds: number, scope: string): Rejection {
  return { code: 'RATE_LIMITED', message: `Rate limit exceeded (${scope}). Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`, retryAfter: seconds };
}

/**
 * The path a request is routed by: the matched route's own path, or, for a request no route
 * matched, its target without scheme, host and query, percent-decoded as the router decodes it.
 * The per-address caps decide on this, never on the raw target (`/%761/usage` and
 * `http://host/v1/usage` are routed as /v1/usage).
 */
export function routedPath(request: FastifyRequest, route: string | undefined = request.routeOptions.url): string {
  if (route !== undefined) return route;
  let target = request.url;
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
  if (authority) target = target.slice(authority[0].length) || '/';
  const end = target.search(/[?#]/);
  if (end >= 0) target = target.slice(0, end);
  try {
    return decodeURIComponent(target);
  } catch {
    return target;
  }
}

/**
 * The request lifecycle's first step, before any body is read:
 *   1. per-address caps: every /v1 request counts in the address's window (also with bad
 *      keys, so key guessing is capped); every other request except the admin API counts in
 *      a second window of the same size (probes, /metrics, /docs), so those routes are capped
 *      without eating a client's /v1 budget; the admin API has its failure throttle instead,
 *      which only ever refuses a wrong token;
 *   2. authentication by API key (or admin token on /admin); on the ingestion routes a
 *      publishable key may also come as `?api_key=` (sendBeacon cannot set headers);
 *   3. key kind and browser origin checks.
 * The per-IP cap runs before authentication: an address over
 * its cap must not learn whether the keys it tries are valid.
 */
export function registerGuards(app: FastifyInstance, deps: GuardDeps): void {
  app.decorateRequest('vigil', null as never);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const options = request.routeOptions;
    const access = options.config?.access ?? 'public';
    request.vigil = { route: options.url, access };
    const ip = request.ip;
    if (access === 'admin') {
      if (!deps.adminToken) throw new ApiError({ code: 'NOT_FOUND', message: 'The admin API is disabled: set VIGIL_ADMIN_TOKEN to enable it.' });
      // The token is checked first, whatever the throttle holds: failures from other sources,
      // or from the operator's own, never refuse the right token. The admin token is accepted
      // only as `Authorization: Bearer`.
      if (deps.checkAdminToken(bearerToken(request.headers))) return;
      const wait = deps.adminFailures.fail(ip, deps.clock.now());
      if (wait > 0) {
        deps.onAdminFailure?.('throttled');
        reply.header('Retry-After', String(wait));
        throw new ApiError(rateLimited(wait, 'too many failed admin authentications from this address'));
      }
      deps.onAdminFailure?.('wrong_token');
      request.log.warn({ ip, url: request.url }, 'admin authentication failed');
      throw new ApiError({ code: 'UNAUTHORIZED', message: 'Missing or wrong admin token (send "Authorization: Bearer <VIGIL_ADMIN_TOKEN>").' });
    }
    const window = routedPath(request, request.vigil.route).startsWith('/v1/') ? ip : `public ${ip}`;
    const decision = await deps.limiter.hitIp(window, deps.ipLimitFor(ip), deps.clock.now());
    request.vigil.rateLimit = decision.status;
    if (!decision.allowed) {
      reply.header('Retry-After', String(decision.retryAfter));
      throw new ApiError(rateLimited(decision.retryAfter, 'per source address'));
    }
    if (!AUTHENTICATED.has(access)) return;
    const presented = presentedKey(request.headers);
    if (presented.conflict) throw new ApiError({ code: 'UNAUTHORIZED', message: 'Two different keys were sent (Authorization and X-API-Key): send one key.' });
    let key = presented.key;
    if (key === undefined && access === 'ingest') {
      const beacon = beaconKey(request.query);
      if (beacon.refused) throw new ApiError({ code: 'UNAUTHORIZED', message: beacon.refused });
      key = beacon.key;
      request.vigil.beacon = key !== undefined;
    }
    const auth = (key === undefined ? await deps.sessions?.authenticate(request) : undefined) ?? (await deps.authenticator.authenticate(key));
    if (!auth.ok) throw new ApiError({ code: 'UNAUTHORIZED', message: auth.message });
    request.vigil.account = auth.ctx;
    request.vigil.allowedOrigins = auth.allowedOrigins;
    if (auth.ctx.keyKind === 'publishable' && access !== 'ingest' && access !== 'any')
      throw new ApiError({ code: 'FORBIDDEN', message: 'Publishable keys can only send events; use a secret key to read or manage.' });
    const refused = refusal(auth.ctx.principal, access as Exclude<Access, 'public' | 'admin'>);
    if (refused !== undefined) throw new ApiError({ code: 'FORBIDDEN', message: refused });
    const origin = request.headers.origin;
    if (auth.ctx.keyKind === 'publishable' && origin !== undefined) {
      if (!auth.allowedOrigins.includes(origin) && !auth.allowedOrigins.includes('*')) {
        throw new ApiError({ code: 'FORBIDDEN', message: `Origin ${origin} is not allowed for this publishable key.` });
      }
      allowOrigin(reply, origin);
    }
  });
}
