import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { SessionStore } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import type { AuthResult, Authenticator } from './authenticator.js';
import { ApiError } from './errors.js';

/** The dashboard's session cookie: HttpOnly, SameSite=Strict, Path=/ (it also authenticates the read API). */
export const SESSION_COOKIE = 'vigil_session';
/** Header that carries the session's CSRF token on every state-changing call. */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** 32 random bytes, URL-safe: session ids and CSRF tokens. */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** The store knows a session only by this hash, so a copy of the table opens no session. */
export const hashSessionId = (id: string): string => createHash('sha256').update(id).digest('hex');

/** The session id in a Cookie header, if any. */
export function sessionIdFrom(cookieHeader: string | undefined): string | undefined {
  if (cookieHeader === undefined) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[\w-]{20,100}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

function sameToken(presented: string | string[] | undefined, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Authenticates a request by its dashboard session cookie. A request that carries an API key
 * is left to the key check (the key decides), and so is one without the cookie. The session
 * resolves to the secret key that opened it, so revoking the key ends the session too.
 */
export class SessionAuthenticator {
  constructor(
    private readonly store: Pick<SessionStore, 'findDashboardSession'>,
    private readonly authenticator: Authenticator,
    private readonly clock: Clock,
  ) {}

  /** `undefined` when the request has no session cookie or carries a key. */
  async authenticate(request: FastifyRequest): Promise<AuthResult | undefined> {
    const headers = request.headers;
    if (headers.authorization !== undefined || headers['x-api-key'] !== undefined) return undefined;
    const id = sessionIdFrom(headers.cookie);
    if (id === undefined) return undefined;
    const found = await this.store.findDashboardSession(hashSessionId(id), this.clock.now());
    if (!found) return { ok: false, message: 'The dashboard session has ended; sign in again.' };
    if (!SAFE_METHODS.has(request.method) && !sameToken(headers[CSRF_HEADER], found.session.csrfToken))
      throw new ApiError({ code: 'FORBIDDEN', message: 'Missing or wrong CSRF token: send the session token in X-CSRF-Token.' });
    return this.authenticator.authenticateHash(found.keyHash);
  }
}
