import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditTrail } from '../audit/trail.js';
import { ApiError } from '../http/errors.js';
import { ErrorResponses } from '../http/schemas.js';
import type { SessionAuthenticator } from '../http/session-auth.js';
import type { RateLimiter } from '../limits/types.js';
import { planOf, type PlanTable } from '../limits/plans.js';
import type { Store } from '../storage/store.js';
import type { MemberRecord, MemberSession, UserRecord } from '../storage/types.js';
import { MAX_PASSWORD_LENGTH, verifyPassword } from '../team/passwords.js';
import { SecondFactor } from '../team/second-factor.js';
import { hashToken, issueToken, liveToken, randomToken } from '../team/tokens.js';
import { MINUTE_MS } from '../util/duration.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';
import { userAgentOf } from '../http/audit-origin.js';

/** A person's session lasts 12 hours; signing in again starts a new one. */
export const MEMBER_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Sign-in attempts per source address per minute, successful or not. */
export const SIGN_IN_PER_ADDRESS_PER_MINUTE = 20;
/** Sign-in attempts per email address per minute, from any address: guessing one person's password stays slow. */
export const SIGN_IN_PER_EMAIL_PER_MINUTE = 5;
/**
 * Sign-in attempts on the people of one account per minute, from any address: spraying one
 * password over a team's addresses stays slow however many addresses the attacker has.
 */
export const SIGN_IN_PER_ACCOUNT_PER_MINUTE = 60;

export interface SignInDeps {
  readonly store: Store;
  readonly plans: PlanTable;
  /** Signing in with an account's secret key is offered too. */
  readonly keySignIn: boolean;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly audit: AuditTrail;
  readonly sessions: SessionAuthenticator;
  readonly setCookie: (request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number) => void;
  readonly sameOrigin: (request: FastifyRequest) => boolean;
  /** Whether single sign-on is offered: by the instance, or (with an account id) by that account. */
  readonly ssoOffered: (accountId: string | undefined) => Promise<boolean>;
}

const SignInOptionsQuery = Type.Object({ account: Type.Optional(Type.String({ maxLength: 64 })) });

const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
    account_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

/** The second step of a sign-in with two-step sign-in on must come within 5 minutes of the password. */
export const MFA_TOKEN_TTL_MS = 5 * MINUTE_MS;

const MfaBody = Type.Object(
  {
    mfa_token: Type.String({ minLength: 1, maxLength: 100 }),
    code: Type.Optional(Type.String({ minLength: 6, maxLength: 10 })),
    recovery_code: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  },
  { additionalProperties: false },
);

/** The session body the dashboard reads: the account, the person, their role and the accounts they may switch to. */
export async function memberSessionView(store: Store, plans: PlanTable, session: MemberSession, user: UserRecord, member: MemberRecord) {
  const account = await store.accounts.getAccount(session.accountId);
  const pro = account !== undefined && planOf(plans, account.plan).capabilities.threatModels;
  const memberships = await store.members.membershipsOf(user.id);
  const accounts = await Promise.all(
    memberships.map(async (m) => ({ id: m.accountId, name: (await store.accounts.getAccount(m.accountId))?.name ?? m.accountId, role: m.role })),
  );
  return {
    account: account && { id: account.id, name: account.name, plan: account.plan, pro },
    member: { id: user.id, email: user.email, name: user.name, role: member.role },
    role: member.role,
    csrf_token: session.csrfToken,
    expires_at: new Date(session.expiresAt).toISOString(),
    accounts,
  };
}

/**
 * Opens a person's session in one account: a random id in the HttpOnly cookie (the store keeps
 * its SHA-256) and a CSRF token the page sends back on every state-changing call.
 */
export async function openMemberSession(
  deps: Pick<SignInDeps, 'store' | 'clock' | 'setCookie'>,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRecord,
  member: MemberRecord,
  method: MemberSession['method'],
): Promise<MemberSession> {
  const now = deps.clock.now();
  const cookie = randomToken();
  const session: MemberSession = {
    id: newId('ses', now),
    idHash: hashToken(cookie),
    accountId: member.accountId,
    userId: user.id,
    csrfToken: randomToken(),
    method,
    ip: request.ip,
    userAgent: userAgentOf(request),
    createdAt: now,
    lastSeenAt: now,
    expiresAt: now + MEMBER_SESSION_TTL_MS,
    revokedAt: null,
  };
  await deps.store.members.createSession(session);
  await deps.store.members.updateUser(user.id, { lastSignInAt: now });
  deps.setCookie(request, reply, cookie, MEMBER_SESSION_TTL_MS / 1000);
  return session;
}

/**
 * Counts an attempt that proves who someone is (a password, a second-factor code, a reset, a
 * single sign-on) in its source address's window and, when known, in the email's; past either it
 * records `sign_in.throttled` and answers the seconds to wait.
 */
export async function signInThrottle(
  deps: Pick<SignInDeps, 'limiter' | 'clock' | 'audit'>,
  request: FastifyRequest,
  email: string | undefined,
): Promise<number | undefined> {
  const now = deps.clock.now();
  const byAddress = await deps.limiter.hitIp(`dashboard sign-in ${request.ip}`, SIGN_IN_PER_ADDRESS_PER_MINUTE, now);
  // The window is named by a digest of the email: the shared state holds no email address.
  const byEmail =
    email === undefined
      ? byAddress
      : await deps.limiter.hitIp(`sign-in email ${createHash('sha256').update(email).digest('hex').slice(0, 32)}`, SIGN_IN_PER_EMAIL_PER_MINUTE, now);
  const refused = !byAddress.allowed ? byAddress : !byEmail.allowed ? byEmail : undefined;
  if (refused === undefined) return undefined;
  await deps.audit.record(
    { accountId: '', actor: { kind: 'anonymous', id: null, label: email ?? null }, ip: request.ip, userAgent: userAgentOf(request) },
    { action: 'sign_in.throttled', details: { by: byAddress.allowed ? 'email' : 'address', route: request.routeOptions.url } },
  );
  return refused.retryAfter;
}

/** signInThrottle for JSON routes: past a limit, 429 with Retry-After. */
export async function throttleSignIn(
  deps: Pick<SignInDeps, 'limiter' | 'clock' | 'audit'>,
  request: FastifyRequest,
  reply: FastifyReply,
  email: string | undefined,
): Promise<void> {
  const retryAfter = await signInThrottle(deps, request, email);
  if (retryAfter === undefined) return;
  reply.header('Retry-After', String(retryAfter));
  throw new ApiError({ code: 'RATE_LIMITED', message: 'Too many attempts; retry in a minute.', retryAfter });
}

/** Signing in with an email and a password. */
export function registerSignInRoutes(app: FastifyInstance, deps: SignInDeps): void {
  const { store, clock, audit } = deps;

  const throttled = (request: FastifyRequest, reply: FastifyReply, email: string) => throttleSignIn(deps, request, reply, email);
  const secondFactor = new SecondFactor(deps);

  /** A failure is recorded in every account the person belongs to, so each account's owners see attempts on their people. */
  const failed = async (request: FastifyRequest, email: string, user: UserRecord | undefined, reason: string): Promise<void> => {
    const accounts = user ? (await store.members.membershipsOf(user.id)).map((m) => m.accountId) : [''];
    for (const accountId of accounts)
      await audit.record(
        { accountId, actor: { kind: 'anonymous', id: user?.id ?? null, label: email }, ip: request.ip, userAgent: userAgentOf(request) },
        { action: 'sign_in.failed', details: { reason } },
      );
  };

  /** Counts the attempt against each account of the person; past an account's limit, none of its people signs in this minute. */
  const throttledAccounts = async (request: FastifyRequest, reply: FastifyReply, user: UserRecord): Promise<void> => {
    const now = clock.now();
    for (const { accountId } of await store.members.membershipsOf(user.id)) {
      const decision = await deps.limiter.hitIp(`sign-in account ${accountId}`, SIGN_IN_PER_ACCOUNT_PER_MINUTE, now);
      if (decision.allowed) continue;
      await audit.record(
        { accountId, actor: { kind: 'anonymous', id: user.id, label: user.email }, ip: request.ip, userAgent: userAgentOf(request) },
        { action: 'sign_in.throttled', details: { by: 'account', route: request.routeOptions.url } },
      );
      reply.header('Retry-After', String(decision.retryAfter));
      throw new ApiError({ code: 'RATE_LIMITED', message: 'Too many attempts; retry in a minute.', retryAfter: decision.retryAfter });
    }
  };

  const signedIn = async (request: FastifyRequest, reply: FastifyReply, user: UserRecord, member: MemberRecord, method: MemberSession['method']) => {
    const session = await openMemberSession(deps, request, reply, user, member, method);
    await audit.record(
      { accountId: member.accountId, actor: { kind: 'member', id: user.id, label: user.email }, ip: request.ip, userAgent: userAgentOf(request) },
      { action: 'sign_in.succeeded', target: { kind: 'session', id: session.id }, details: { method: session.method } },
    );
    reply.code(201);
    return memberSessionView(store, deps.plans, session, user, member);
  };

  app.get<{ Querystring: Static<typeof SignInOptionsQuery> }>('/dashboard/api/sign-in', {
    schema: { hide: true, querystring: SignInOptionsQuery, response: { ...ErrorResponses } },
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      return { password: true, key_sign_in: deps.keySignIn, sso: await deps.ssoOffered(request.query.account) };
    },
  });

  app.post<{ Body: Static<typeof SignInBody> }>('/dashboard/api/sign-in', {
    schema: { hide: true, body: SignInBody, response: { ...ErrorResponses } },
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      if (!deps.sameOrigin(request)) throw new ApiError({ code: 'FORBIDDEN', message: 'Sign in from the dashboard itself.' });
      const email = request.body.email.trim().toLowerCase();
      await throttled(request, reply, email);
      const user = await store.members.findUserByEmail(email);
      if (user) await throttledAccounts(request, reply, user);
      const matches = await verifyPassword(request.body.password, user?.passwordHash ?? null);
      const memberships = user && matches ? await store.members.membershipsOf(user.id) : [];
      const member = memberships.find((m) => request.body.account_id === undefined || m.accountId === request.body.account_id);
      if (!user || !matches || !member) {
        await failed(request, email, user, !user ? 'unknown_email' : !matches ? 'wrong_password' : 'no_membership');
        throw new ApiError({ code: 'UNAUTHORIZED', message: 'Wrong email or password.' });
      }
      if (user.totpEnabledAt !== null) {
        // The password is right; the session waits for the second factor, proven with this token.
        const now = clock.now();
        const mfaToken = await issueToken(store, {
          id: newId('tok', now),
          purpose: 'mfa',
          accountId: member.accountId,
          userId: user.id,
          email: user.email,
          role: null,
          data: {},
          createdBy: null,
          createdAt: now,
          expiresAt: now + MFA_TOKEN_TTL_MS,
        });
        return { mfa_required: true, mfa_token: mfaToken };
      }
      return signedIn(request, reply, user, member, 'password');
    },
  });

  app.post<{ Body: Static<typeof MfaBody> }>('/dashboard/api/sign-in/mfa', {
    schema: { hide: true, body: MfaBody, response: { ...ErrorResponses } },
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      if (!deps.sameOrigin(request)) throw new ApiError({ code: 'FORBIDDEN', message: 'Sign in from the dashboard itself.' });
      const { code, recovery_code: recoveryCode } = request.body;
      if ((code === undefined) === (recoveryCode === undefined))
        throw new ApiError({ code: 'INVALID_REQUEST', message: 'Send either code (from the authenticator app) or recovery_code.' });
      const pending = await liveToken(store, request.body.mfa_token, 'mfa', clock.now());
      const user = pending?.userId ? await store.members.getUser(pending.userId) : undefined;
      const ended = new ApiError({ code: 'UNAUTHORIZED', message: 'This sign-in has expired; enter your email and password again.' });
      if (!pending?.accountId || !user) throw ended;
      await throttled(request, reply, user.email);
      const used = await secondFactor.check(user, { code, recoveryCode });
      if (used === undefined) {
        await failed(request, user.email, user, code === undefined ? 'wrong_recovery_code' : 'wrong_code');
        throw new ApiError({ code: 'UNAUTHORIZED', message: code === undefined ? 'Wrong recovery code.' : 'Wrong code.' });
      }
      const member = await store.members.getMember(pending.accountId, user.id);
      if (!member || !(await store.members.useToken(pending.tokenHash, clock.now()))) throw ended;
      return signedIn(request, reply, user, member, used === 'totp' ? 'password+totp' : 'password+recovery');
    },
  });
}
