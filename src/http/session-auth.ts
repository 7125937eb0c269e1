import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AccountContext } from '../event/account.js';
import { planOf, type PlanTable } from '../limits/plans.js';
import type { Store } from '../storage/store.js';
import type { MemberRecord, MemberSession, UserRecord } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import type { AuthResult, Authenticator } from './authenticator.js';
import { ApiError } from './errors.js';
import { hashToken } from '../team/tokens.js';

/** The dashboard's session cookie: HttpOnly, SameSite=Strict, Path=/ (it also authenticates the read API). */
export const SESSION_COOKIE = 'vigil_session';
/** Header that carries the session's CSRF token on every state-changing call. */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The value of one cookie in a Cookie header, if it is there and looks like a token of ours. */
export function cookieFrom(cookieHeader: string | undefined, name: string): string | undefined {
  if (cookieHeader === undefined) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[\w-]{20,100}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** The session id in a Cookie header, if any. */
export const sessionIdFrom = (cookieHeader: string | undefined): string | undefined => cookieFrom(cookieHeader, SESSION_COOKIE);

function sameToken(presented: string | string[] | undefined, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A session's last use is written at most this often (the sessions list shows it to the minute). */
const TOUCH_EVERY_MS = 60_000;

export interface SessionAuthDeps {
  readonly store: Pick<Store, 'sessions' | 'members' | 'accounts'>;
  readonly authenticator: Authenticator;
  readonly plans: PlanTable;
  readonly clock: Clock;
  /** Sessions opened with an account's secret key are honoured only while the operator allows key sign-in. */
  readonly keySignIn: boolean;
}

/** A person's session as the guards resolved it, with the account it is for. */
export interface ResolvedMemberSession {
  readonly session: MemberSession;
  readonly user: UserRecord;
  readonly member: MemberRecord;
  readonly ctx: AccountContext;
}

/**
 * Authenticates a request by its dashboard session cookie. A request that carries an API key
 * is left to the key check (the key decides), and so is one without the cookie. A person's
 * session is read from the store on every request, so revoking it, removing the person from the
 * account or changing their role applies to the very next request on every instance. A session
 * opened with a secret key (only while key sign-in is allowed) resolves to that key, so revoking
 * the key ends the session too.
 */
export class SessionAuthenticator {
  constructor(private readonly deps: SessionAuthDeps) {}

  /** The live person's session of this cookie value, with its member and account; undefined when there is none. */
  async memberSession(id: string): Promise<ResolvedMemberSession | undefined> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const session = await store.members.findSession(hashToken(id), now);
    if (!session) return undefined;
    const [user, member, account] = await Promise.all([
      store.members.getUser(session.userId),
      store.members.getMember(session.accountId, session.userId),
      store.accounts.getAccount(session.accountId),
    ]);
    if (!user || !member || !account) return undefined;
    if (now - session.lastSeenAt >= TOUCH_EVERY_MS) await store.members.touchSession(session.id, now);
    const ctx: AccountContext = {
      account,
      plan: planOf(this.deps.plans, account.plan),
      keyId: `member:${user.id}`,
      keyKind: 'secret',
      principal: { kind: 'member', userId: user.id, email: user.email, role: member.role, sessionId: session.id },
    };
    return { session, user, member, ctx };
  }

  /** `undefined` when the request has no session cookie or carries a key. */
  async authenticate(request: FastifyRequest): Promise<AuthResult | undefined> {
    const headers = request.headers;
    if (headers.authorization !== undefined || headers['x-api-key'] !== undefined) return undefined;
    const id = sessionIdFrom(headers.cookie);
    if (id === undefined) return undefined;
    const ended: AuthResult = { ok: false, message: 'The dashboard session has ended; sign in again.' };
    const member = await this.memberSession(id);
    if (member) {
      checkCsrf(request, member.session.csrfToken);
      return { ok: true, ctx: member.ctx, allowedOrigins: [] };
    }
    if (!this.deps.keySignIn) return ended;
    const found = await this.deps.store.sessions.findDashboardSession(hashToken(id), this.deps.clock.now());
    if (!found) return ended;
    checkCsrf(request, found.session.csrfToken);
    return this.deps.authenticator.authenticateHash(found.keyHash);
  }
}

function checkCsrf(request: FastifyRequest, expected: string): void {
  if (!SAFE_METHODS.has(request.method) && !sameToken(request.headers[CSRF_HEADER], expected))
    throw new ApiError({ code: 'FORBIDDEN', message: 'Missing or wrong CSRF token: send the session token in X-CSRF-Token.' });
}
