import { Type, type Static } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import { ErrorResponses } from '../http/schemas.js';
import { Invitations } from '../team/invitations.js';
import type { MembersFailure, TeamDeps } from '../team/members.js';
import { PasswordResets } from '../team/password-reset.js';
import { MAX_PASSWORD_LENGTH } from '../team/passwords.js';
import { userAgentOf } from '../http/audit-origin.js';
import { memberSessionView, openMemberSession, throttleSignIn, type SignInDeps } from './sign-in.js';

export type PeoplePageDeps = TeamDeps & Pick<SignInDeps, 'plans' | 'limiter' | 'setCookie' | 'sameOrigin'>;

const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
const AcceptBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }) },
  { additionalProperties: false },
);
const ResetRequestBody = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }) }, { additionalProperties: false });
const NewPasswordBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }) }, { additionalProperties: false });

const hidden = { hide: true, response: { ...ErrorResponses } } as const;

const refused = (failure: MembersFailure): ApiError => new ApiError({ code: failure.code, message: failure.message });

const fromOf = (request: FastifyRequest) => ({ ip: request.ip, userAgent: userAgentOf(request) });

/** The failure of mail sent after the answer goes to the log (the link and the SMTP credentials never do). */
const logMailFailure = (log: FastifyBaseLogger) => (err: unknown) =>
  log.warn({ reason: err instanceof Error ? err.message : 'unknown' }, 'password reset mail not sent');

/**
 * The pages someone reaches without a session: an invitation link, a forgotten password. Each
 * call is same-origin only and counts in the sign-in throttle of its address (and of the email
 * whose password it checks or sets).
 */
export function registerPeoplePages(app: FastifyInstance, deps: PeoplePageDeps): void {
  const invitations = new Invitations(deps);
  const resets = new PasswordResets(deps);
  const guard = async (request: FastifyRequest, reply: Parameters<typeof throttleSignIn>[2], email: string | undefined) => {
    reply.header('Cache-Control', 'no-store');
    if (!deps.sameOrigin(request)) throw new ApiError({ code: 'FORBIDDEN', message: 'Use the dashboard itself.' });
    await throttleSignIn(deps, request, reply, email);
  };
  const invalidInvitation = () => new ApiError({ code: 'NOT_FOUND', message: 'This invitation link is not valid: it was used, withdrawn or has expired.' });

  app.get<{ Params: Static<typeof TokenParams> }>('/dashboard/api/invitations/:token', {
    schema: { ...hidden, params: TokenParams },
    handler: async (request, reply) => {
      await guard(request, reply, undefined);
      const found = await invitations.describe(request.params.token);
      if (!found) throw invalidInvitation();
      return {
        email: found.invitation.email,
        role: found.invitation.role,
        account: { name: found.accountName },
        existing_person: found.existingPerson,
        expires_at: new Date(found.invitation.expiresAt).toISOString(),
      };
    },
  });

  app.post<{ Params: Static<typeof TokenParams>; Body: Static<typeof AcceptBody> }>('/dashboard/api/invitations/:token/accept', {
    schema: { ...hidden, params: TokenParams, body: AcceptBody },
    handler: async (request, reply) => {
      const found = await invitations.describe(request.params.token);
      // A wrong password of someone who already has one counts against their email, as at sign-in.
      await guard(request, reply, found?.invitation.email ?? undefined);
      if (!found) throw invalidInvitation();
      const accepted = await invitations.accept(request.params.token, request.body, fromOf(request));
      if (!accepted.ok) throw refused(accepted);
      const { user, member } = accepted.value;
      const session = await openMemberSession(deps, request, reply, user, member, 'invitation');
      reply.code(201);
      return memberSessionView(deps.store, deps.plans, session, user, member);
    },
  });

  app.post<{ Body: Static<typeof ResetRequestBody> }>('/dashboard/api/password-reset', {
    schema: { ...hidden, body: ResetRequestBody },
    handler: async (request, reply) => {
      await guard(request, reply, request.body.email.trim().toLowerCase());
      const { sent } = await resets.request(request.body.email, fromOf(request));
      sent.catch(logMailFailure(request.log));
      reply.code(202);
      return { status: 'accepted', message: 'If this email belongs to someone, a reset link is on its way.' };
    },
  });

  app.post<{ Params: Static<typeof TokenParams>; Body: Static<typeof NewPasswordBody> }>('/dashboard/api/password-reset/:token', {
    schema: { ...hidden, params: TokenParams, body: NewPasswordBody },
    handler: async (request, reply) => {
      await guard(request, reply, undefined);
      const done = await resets.complete(request.params.token, request.body.password, fromOf(request));
      if (!done.ok) throw refused(done);
      reply.code(204);
      return null;
    },
  });
}
