import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import { ErrorResponses } from '../http/schemas.js';
import { cookieFrom } from '../http/session-auth.js';
import { OIDC_STATE_TTL_MS, type OidcSignIn, type SsoFailure } from '../team/oidc.js';
import { userAgentOf } from '../http/audit-origin.js';
import { openMemberSession, signInThrottle, throttleSignIn, type SignInDeps } from './sign-in.js';

/**
 * The cookie that ties a sign-in at the provider to the browser that started it (so a link to
 * the callback, sent to someone else, signs no one in). SameSite=Lax: the provider's redirect
 * back is a cross-site navigation, which a Strict cookie would not ride on.
 */
const BINDING_COOKIE = 'vigil_oidc';
const BINDING_PATH = '/dashboard/api/oidc';

export const OIDC_CALLBACK_PATH = '/dashboard/api/oidc/callback';

export interface OidcRouteDeps extends SignInDeps {
  readonly oidc: OidcSignIn;
  /** VIGIL_PUBLIC_URL; without it the redirect URI is built from the request's address. */
  readonly publicUrl?: string;
}

const StartBody = Type.Object({ account_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false });
const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 2048 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    iss: Type.Optional(Type.String({ maxLength: 512 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 1024 })),
    session_state: Type.Optional(Type.String({ maxLength: 512 })),
  },
  // Providers add parameters of their own; openid-client reads the ones it knows.
  { additionalProperties: Type.String({ maxLength: 2048 }), maxProperties: 16 },
);

function bindingCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  reply.header('Set-Cookie', `${BINDING_COOKIE}=${value}; Path=${BINDING_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`);
}

/** The redirect URI the provider sends the browser back to (registered at the provider). */
export const oidcRedirectUri = (publicUrl: string | undefined, request: FastifyRequest): string =>
  `${publicUrl ?? `${request.protocol}://${request.host}`}${OIDC_CALLBACK_PATH}`;

/**
 * Single sign-on in the dashboard: POST start answers the provider's URL the page navigates to;
 * the provider sends the browser back to the callback, which opens the session and redirects to
 * the dashboard, or to its sign-in page with an error key.
 */
export function registerOidcRoutes(app: FastifyInstance, deps: OidcRouteDeps): void {
  const { oidc, audit } = deps;

  app.post<{ Body: Static<typeof StartBody> }>('/dashboard/api/oidc/start', {
    schema: { hide: true, body: StartBody, response: { ...ErrorResponses } },
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      if (!deps.sameOrigin(request)) throw new ApiError({ code: 'FORBIDDEN', message: 'Sign in from the dashboard itself.' });
      await throttleSignIn(deps, request, reply, undefined);
      const started = await oidc.start(request.body.account_id, oidcRedirectUri(deps.publicUrl, request));
      if (!started.ok) {
        if (started.reason === 'sso_unavailable') {
          request.log.warn({ detail: started.detail }, 'the single sign-on provider could not be reached');
          throw new ApiError({ code: 'UNAVAILABLE', message: 'The single sign-on provider cannot be reached; retry shortly.', retryAfter: 5 });
        }
        throw new ApiError({
          code: 'NOT_FOUND',
          message: request.body.account_id === undefined ? 'Single sign-on is not set up for this instance.' : 'Single sign-on is not set up for this account.',
        });
      }
      bindingCookie(request, reply, started.value.binding, OIDC_STATE_TTL_MS / 1000);
      return { redirect: started.value.redirect };
    },
  });

  app.get<{ Querystring: Static<typeof CallbackQuery> }>(OIDC_CALLBACK_PATH, {
    schema: { hide: true, querystring: CallbackQuery },
    // A malformed callback still lands on the sign-in page, not on a JSON error.
    attachValidation: true,
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      const origin = { ip: request.ip, userAgent: userAgentOf(request) };
      const fail = async (reason: SsoFailure | 'rate_limited', accountId: string, email?: string, detail?: string) => {
        if (reason !== 'rate_limited')
          await audit.record(
            { ...origin, accountId, actor: { kind: 'anonymous', id: null, label: email ?? null } },
            { action: 'sign_in.failed', details: { reason, method: 'oidc' } },
          );
        if (detail !== undefined) request.log.info({ reason, detail }, 'single sign-on refused');
        bindingCookie(request, reply, '', 0);
        return reply.redirect(`/dashboard/#/sign-in?error=${reason}`, 303);
      };
      if ((await signInThrottle(deps, request, undefined)) !== undefined) return fail('rate_limited', '');
      if (request.validationError) return fail('sso_state', '', undefined, request.validationError.message);
      const query = new URLSearchParams(Object.entries(request.query as Record<string, string>));
      const finished = await oidc.finish(query, cookieFrom(request.headers.cookie, BINDING_COOKIE), origin);
      if (!finished.ok) return fail(finished.reason, finished.accountId, finished.email, finished.detail);
      const { user, member } = finished.value;
      const session = await openMemberSession(deps, request, reply, user, member, 'oidc');
      await audit.record(
        { ...origin, accountId: member.accountId, actor: { kind: 'member', id: user.id, label: user.email } },
        { action: 'sign_in.succeeded', target: { kind: 'session', id: session.id }, details: { method: session.method } },
      );
      bindingCookie(request, reply, '', 0);
      return reply.redirect('/dashboard/', 303);
    },
  });
}
