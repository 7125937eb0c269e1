import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditOrigin } from '../../audit/trail.js';
import { ROLES } from '../../event/account.js';
import type { Store } from '../../storage/store.js';
import type { MemberRecord, MemberSession, MemberToken, UserRecord } from '../../storage/types.js';
import { Invitations, type Invitation } from '../../team/invitations.js';
import { Members, type MembersResult, type TeamDeps } from '../../team/members.js';
import { PasswordResets, RESET_TTL_MS } from '../../team/password-reset.js';
import { MAX_PASSWORD_LENGTH } from '../../team/passwords.js';
import { SecondFactor } from '../../team/second-factor.js';
import { adminOrigin, auditOrigin } from '../audit-origin.js';
import { requestAccount } from '../context.js';
import { ApiError } from '../errors.js';
import { NoFilters } from '../list-filter.js';
import { ErrorResponses, KeyAuth } from '../schemas.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A member as the API shows them: `sso` marks a person without a password, who signs in only through single sign-on. */
export const memberView = (user: UserRecord, member: MemberRecord) => ({
  id: user.id,
  email: user.email,
  name: user.name,
  role: member.role,
  totp: user.totpEnabledAt !== null,
  sso: user.passwordHash === null,
  created_at: iso(member.createdAt),
  last_sign_in_at: iso(user.lastSignInAt),
});

const invitationView = (i: MemberToken) => ({ id: i.id, email: i.email, role: i.role, expires_at: iso(i.expiresAt), created_by: i.createdBy });

const sessionView = (s: MemberSession, current: string | undefined) => ({
  id: s.id,
  method: s.method,
  ip: s.ip,
  user_agent: s.userAgent,
  created_at: iso(s.createdAt),
  last_seen_at: iso(s.lastSeenAt),
  expires_at: iso(s.expiresAt),
  current: s.id === current,
});

const createdInvitationView = (i: Invitation) => ({
  ...invitationView(i.record),
  ...(i.link === undefined ? {} : { link: i.link }),
  emailed: i.emailed,
});

function unwrap<T>(result: MembersResult<T>): T {
  if (!result.ok) throw new ApiError({ code: result.code, message: result.message });
  return result.value;
}

const Id = Type.String({ minLength: 1, maxLength: 64 });
const Email = Type.String({ minLength: 3, maxLength: 254 });
const RoleSchema = Type.Union(ROLES.map((r) => Type.Literal(r)));
const Password = Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH });
const Code = Type.String({ minLength: 6, maxLength: 10, description: 'The current 6-digit code of the authenticator app' });
const UserParams = Type.Object({ userId: Id });
const UserSessionParams = Type.Object({ userId: Id, sessionId: Id });
const IdParams = Type.Object({ id: Id });
const InviteBody = Type.Object({ email: Email, role: RoleSchema }, { additionalProperties: false });
const RoleBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });
const PasswordBody = Type.Object({ current_password: Password, new_password: Password }, { additionalProperties: false });
const CodeBody = Type.Object({ code: Code }, { additionalProperties: false });
const DisableTotpBody = Type.Object({ code: Type.Optional(Code), password: Type.Optional(Password) }, { additionalProperties: false });
const EmailBody = Type.Object({ email: Email }, { additionalProperties: false });

/** The signed-in person of a 'self' route (the guards let only people through). */
async function me(store: Store, request: FastifyRequest): Promise<{ user: UserRecord; member: MemberRecord; sessionId: string; origin: AuditOrigin }> {
  const ctx = requestAccount(request);
  const principal = ctx.principal;
  if (principal.kind !== 'member') throw new ApiError({ code: 'FORBIDDEN', message: 'Only a person signed in to the dashboard can do this; API keys cannot.' });
  const [user, member] = await Promise.all([store.members.getUser(principal.userId), store.members.getMember(ctx.account.id, principal.userId)]);
  if (!user || !member) throw new ApiError({ code: 'UNAUTHORIZED', message: 'The dashboard session has ended; sign in again.' });
  return { user, member, sessionId: principal.sessionId, origin: auditOrigin(request) };
}

/**
 * The people of an account (admins), each person's own settings, sessions and second factor,
 * and the operator's admin API for invitations and reset links.
 */
export function registerMemberRoutes(app: FastifyInstance, deps: TeamDeps): void {
  const { store, clock } = deps;
  const members = new Members(store, deps.audit, clock);
  const invitations = new Invitations(deps);
  const resets = new PasswordResets(deps);
  const secondFactor = new SecondFactor(deps);
  const people = { access: 'people' as const };
  const self = { access: 'self' as const };
  const route = (summary: string, tag = 'members') => ({ summary, tags: [tag], security: KeyAuth, response: { ...ErrorResponses } });

  app.get('/v1/members', {
    config: people,
    schema: { ...route('The account’s members and pending invitations (admins)'), querystring: NoFilters },
    handler: async (request) => {
      const accountId = requestAccount(request).account.id;
      const [list, pending] = await Promise.all([store.members.listMembers(accountId), store.members.listInvitations(accountId, clock.now())]);
      return { members: list.map(({ user, member }) => memberView(user, member)), invitations: pending.map(invitationView) };
    },
  });

  app.patch<{ Params: Static<typeof UserParams>; Body: Static<typeof RoleBody> }>('/v1/members/:userId', {
    config: people,
    schema: { ...route('Change a member’s role (only owners grant or take owner; the last owner keeps it)'), params: UserParams, body: RoleBody },
    handler: async (request) => {
      const { user, member } = unwrap(await members.changeRole(auditOrigin(request), request.params.userId, request.body.role));
      return memberView(user, member);
    },
  });

  app.delete<{ Params: Static<typeof UserParams> }>('/v1/members/:userId', {
    config: people,
    schema: { ...route('Remove a member from the account; their sessions in it end'), params: UserParams },
    handler: async (request, reply) => {
      unwrap(await members.remove(auditOrigin(request), request.params.userId));
      reply.code(204);
      return null;
    },
  });

  app.get<{ Params: Static<typeof UserParams> }>('/v1/members/:userId/sessions', {
    config: people,
    schema: { ...route('A member’s live sessions in this account'), params: UserParams, querystring: NoFilters },
    handler: async (request) => {
      const ctx = requestAccount(request);
      if (!(await store.members.getMember(ctx.account.id, request.params.userId)))
        throw new ApiError({ code: 'NOT_FOUND', message: `No member ${request.params.userId} in this account.` });
      const current = ctx.principal.kind === 'member' ? ctx.principal.sessionId : undefined;
      const sessions = await store.members.listSessions(request.params.userId, clock.now(), ctx.account.id);
      return { sessions: sessions.map((s) => sessionView(s, current)) };
    },
  });

  app.delete<{ Params: Static<typeof UserSessionParams> }>('/v1/members/:userId/sessions/:sessionId', {
    config: people,
    schema: { ...route('End a member’s session'), params: UserSessionParams },
    handler: async (request, reply) => {
      unwrap(await members.revokeSession(auditOrigin(request), request.params.userId, request.params.sessionId));
      reply.code(204);
      return null;
    },
  });

  app.post<{ Body: Static<typeof InviteBody> }>('/v1/invitations', {
    config: people,
    schema: { ...route('Invite someone by a single-use link (72 hours); the link is in the answer unless it was mailed'), body: InviteBody },
    handler: async (request, reply) => {
      const invitation = unwrap(await invitations.invite(auditOrigin(request), request.body));
      reply.code(201);
      return createdInvitationView(invitation);
    },
  });

  app.delete<{ Params: Static<typeof IdParams> }>('/v1/invitations/:id', {
    config: people,
    schema: { ...route('Withdraw a pending invitation'), params: IdParams },
    handler: async (request, reply) => {
      unwrap(await invitations.revoke(auditOrigin(request), request.params.id));
      reply.code(204);
      return null;
    },
  });

  app.get('/v1/me', {
    config: self,
    schema: { ...route('The signed-in person and the account of the session', 'me'), querystring: NoFilters },
    handler: async (request) => {
      const { user, member } = await me(store, request);
      const { account } = requestAccount(request);
      return { ...memberView(user, member), account: { id: account.id, name: account.name, plan: account.plan } };
    },
  });

  app.get('/v1/me/sessions', {
    config: self,
    schema: { ...route('The signed-in person’s live sessions, in every account; `current` marks this one', 'me'), querystring: NoFilters },
    handler: async (request) => {
      const { user, sessionId } = await me(store, request);
      return { sessions: (await store.members.listSessions(user.id, clock.now())).map((s) => sessionView(s, sessionId)) };
    },
  });

  app.delete<{ Params: Static<typeof IdParams> }>('/v1/me/sessions/:id', {
    config: self,
    schema: { ...route('End one of your sessions (this one signs you out)', 'me'), params: IdParams },
    handler: async (request, reply) => {
      const { user, origin } = await me(store, request);
      const session = (await store.members.listSessions(user.id, clock.now())).find((s) => s.id === request.params.id);
      if (!session) throw new ApiError({ code: 'NOT_FOUND', message: `No live session ${request.params.id}.` });
      // The entry goes to the account the session was for.
      unwrap(await members.revokeSession({ ...origin, accountId: session.accountId }, user.id, session.id));
      reply.code(204);
      return null;
    },
  });

  app.post<{ Body: Static<typeof PasswordBody> }>('/v1/me/password', {
    config: self,
    schema: { ...route('Change your password; your other sessions end', 'me'), body: PasswordBody },
    handler: async (request, reply) => {
      const { user, sessionId, origin } = await me(store, request);
      unwrap(
        await members.changePassword(origin, {
          userId: user.id,
          currentPassword: request.body.current_password,
          newPassword: request.body.new_password,
          keepSessionId: sessionId,
        }),
      );
      reply.code(204);
      return null;
    },
  });

  app.post('/v1/me/totp', {
    config: self,
    schema: { ...route('Start two-step sign-in: a new authenticator secret, on once a code from it is confirmed', 'me') },
    handler: async (request, reply) => {
      const { user } = await me(store, request);
      const { secret, uri } = unwrap(await secondFactor.begin(user, 'Vigil'));
      reply.header('Cache-Control', 'no-store');
      reply.code(201);
      return { secret, otpauth_uri: uri };
    },
  });

  app.post<{ Body: Static<typeof CodeBody> }>('/v1/me/totp/confirm', {
    config: self,
    schema: { ...route('Turn two-step sign-in on with a current code; answers 10 single-use recovery codes, shown this once', 'me'), body: CodeBody },
    handler: async (request, reply) => {
      const { user, origin } = await me(store, request);
      const { recoveryCodes } = unwrap(await secondFactor.confirm(origin, user, request.body.code));
      reply.header('Cache-Control', 'no-store');
      return { recovery_codes: recoveryCodes };
    },
  });

  app.delete<{ Body: Static<typeof DisableTotpBody> }>('/v1/me/totp', {
    config: self,
    schema: { ...route('Turn two-step sign-in off, proven by a current code or the password', 'me'), body: DisableTotpBody },
    handler: async (request, reply) => {
      const { user, origin } = await me(store, request);
      if ((request.body.code === undefined) === (request.body.password === undefined))
        throw new ApiError({ code: 'INVALID_REQUEST', message: 'Send either code or password.' });
      unwrap(await secondFactor.disable(origin, user, request.body));
      reply.code(204);
      return null;
    },
  });

  app.post<{ Body: Static<typeof CodeBody> }>('/v1/me/recovery-codes', {
    config: self,
    schema: { ...route('Replace your recovery codes (the old ones stop working), proven by a current code', 'me'), body: CodeBody },
    handler: async (request, reply) => {
      const { user, origin } = await me(store, request);
      const { recoveryCodes } = unwrap(await secondFactor.regenerate(origin, user, request.body.code));
      reply.header('Cache-Control', 'no-store');
      return { recovery_codes: recoveryCodes };
    },
  });

  const admin = { access: 'admin' as const };
  const adminRoute = (summary: string) => ({ summary, tags: ['admin'], security: [{ bearer: [] as string[] }], response: { ...ErrorResponses } });
  const operator = (request: FastifyRequest, accountId: string): AuditOrigin => ({ accountId, ...adminOrigin(request) });

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof InviteBody> }>('/admin/accounts/:id/invitations', {
    config: admin,
    schema: { ...adminRoute('Invite someone to an account; the link is in the answer unless it was mailed'), params: IdParams, body: InviteBody },
    handler: async (request, reply) => {
      const invitation = unwrap(await invitations.invite(operator(request, request.params.id), request.body));
      reply.code(201);
      return createdInvitationView(invitation);
    },
  });

  app.post<{ Body: Static<typeof EmailBody> }>('/admin/users/reset-link', {
    config: admin,
    schema: { ...adminRoute('A single-use password reset link for a person (valid one hour), for the operator to pass on'), body: EmailBody },
    handler: async (request, reply) => {
      const { link, user } = unwrap(await resets.operatorLink(operator(request, ''), request.body.email));
      reply.header('Cache-Control', 'no-store');
      reply.code(201);
      return { email: user.email, link, expires_at: iso(clock.now() + RESET_TTL_MS) };
    },
  });
}
