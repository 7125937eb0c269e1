import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../http/authenticator.js';
import { ApiError } from '../http/errors.js';
import { ErrorResponses, KeyAuth } from '../http/schemas.js';
import { CSRF_HEADER, SESSION_COOKIE, sessionIdFrom, type SessionAuthenticator } from '../http/session-auth.js';
import { hashToken, randomToken } from '../team/tokens.js';
import type { AuditTrail } from '../audit/trail.js';
import { memberSessionView, registerSignInRoutes, type SignInDeps } from './sign-in.js';
import { registerPeoplePages } from './people.js';
import type { Mailer } from '../team/mailer.js';
import { registerOidcRoutes } from './oidc.js';
import type { OidcSignIn } from '../team/oidc.js';
import type { RateLimiter } from '../limits/types.js';
import type { PlanTable } from '../limits/plans.js';
import type { Store } from '../storage/store.js';
import type { AlertNote, AlertStatus, AuditEntry } from '../storage/types.js';
import type { AccountContext } from '../event/account.js';
import type { Clock } from '../util/clock.js';
import type { StaticFile } from './static-files.js';
import { alertViewsWithAssignees } from '../http/alert-views.js';
import { addAlertNote } from '../http/alert-triage.js';
import { requestAccount } from '../http/context.js';
import { DAY_MS, HOUR_MS } from '../util/duration.js';

export interface DashboardDeps {
  readonly store: Store;
  readonly authenticator: Authenticator;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  /** The built bundle, by path under /dashboard/ (empty when not built). */
  readonly files: ReadonlyMap<string, StaticFile>;
  readonly sessions: SessionAuthenticator;
  readonly audit: AuditTrail;
  readonly plans: PlanTable;
  /** Signing in with an account's secret key is allowed (an operator's choice for installations from before people signed in). */
  readonly keySignIn: boolean;
  /** Links in invitations and password resets, and the mail that carries them. */
  readonly team: { readonly publicUrl?: string; readonly mailer?: Mailer };
  readonly oidc: OidcSignIn;
}

/** A session lasts 12 hours; signing in again starts a new one. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** Sign-in attempts per source address per minute, successful or not. */
export const SIGN_IN_PER_MINUTE = 20;

/**
 * Scripts only from the service itself; no inline script or style, no plug-ins, no framing.
 * Charts set element styles through the CSSOM, which style-src does not restrict.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const RANGES = {
  '24h': { ms: DAY_MS, bucket: HOUR_MS },
  '7d': { ms: 7 * DAY_MS, bucket: 6 * HOUR_MS },
  '30d': { ms: 30 * DAY_MS, bucket: DAY_MS },
};

const SignInBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
const OverviewQuery = Type.Object(
  { range: Type.Optional(Type.Union([Type.Literal('24h'), Type.Literal('7d'), Type.Literal('30d')], { default: '24h' })) },
  { additionalProperties: false },
);
const AlertStatusSchema = Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved'), Type.Literal('false_positive')]);
const NoteBody = Type.Object({ status: AlertStatusSchema, note: Type.String({ minLength: 1, maxLength: 2000 }) }, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/**
 * A kill chain's stages in order, each with the events that met it: a chain alert's details hold
 * one step per sighting of a stage (`{stage, at, event_id, …}`), a stage met again having a step
 * of its own.
 */
function stageEvents(steps: readonly unknown[]): { stage: string; event_ids: string[] }[] {
  const out: { stage: string; event_ids: string[] }[] = [];
  for (const step of steps) {
    if (typeof step !== 'object' || step === null) continue;
    const { stage, event_id: eventId } = step as { stage?: unknown; event_id?: unknown };
    if (typeof stage !== 'string') continue;
    let entry = out.find((e) => e.stage === stage);
    if (entry === undefined) out.push((entry = { stage, event_ids: [] }));
    if (typeof eventId === 'string' && !entry.event_ids.includes(eventId)) entry.event_ids.push(eventId);
  }
  return out;
}

/** Sign-in and the static files stay out of the OpenAPI document (they are the dashboard's, not the API's). */
const hidden = { hide: true } as const;

function setSessionCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  reply.header('Set-Cookie', `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`);
}

/** A browser sends Origin on cross-origin POSTs: sign-in is accepted only from the dashboard's own origin. */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

const accountIdOf = (request: FastifyRequest): string => {
  const id = request.vigil.account?.account.id;
  if (!id) throw new ApiError({ code: 'UNAUTHORIZED', message: 'Sign in first.' });
  return id;
};

/** `pro`: the plan has threat models, which the dashboard's threat-model views offer. */
const accountView = ({ account, plan }: AccountContext) => ({ id: account.id, name: account.name, plan: account.plan, pro: plan.capabilities.threatModels });

const noteView = (n: AlertNote) => ({ id: n.id, status: n.status, note: n.note, created_at: new Date(n.createdAt).toISOString(), author: n.author });

/** Status and assignee changes of an alert, from the audit trail. */
const HISTORY_ACTIONS: ReadonlySet<string> = new Set(['alert.status_changed', 'alert.assigned']);
/** The changes of one alert listed with its notes (the audit trail keeps them all). */
const HISTORY_LIMIT = 200;
const historyView = (e: AuditEntry) => ({ at: new Date(e.at).toISOString(), action: e.action, author: e.actor, changes: e.changes });

/**
 * The dashboard: its static bundle at /dashboard, sign-in and sign-out (a secret key exchanged
 * for a server-side session in an HttpOnly cookie), and the few aggregates the overview needs.
 * Everything else the dashboard shows comes from the read API, authenticated by that cookie.
 */
export function registerDashboardRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const { store, clock } = deps;
  const signIn: SignInDeps = {
    store,
    plans: deps.plans,
    keySignIn: deps.keySignIn,
    clock,
    limiter: deps.limiter,
    audit: deps.audit,
    sessions: deps.sessions,
    setCookie: setSessionCookie,
    sameOrigin,
    ssoOffered: (accountId) => deps.oidc.offered(accountId),
  };
  registerSignInRoutes(app, signIn);
  registerOidcRoutes(app, { ...signIn, oidc: deps.oidc, publicUrl: deps.team.publicUrl });
  registerPeoplePages(app, {
    store,
    audit: deps.audit,
    clock,
    plans: deps.plans,
    limiter: deps.limiter,
    setCookie: setSessionCookie,
    sameOrigin,
    ...deps.team,
  });

  app.post<{ Body: Static<typeof SignInBody> }>('/dashboard/api/session', {
    schema: { ...hidden, body: SignInBody, response: { ...ErrorResponses } },
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      if (!sameOrigin(request)) throw new ApiError({ code: 'FORBIDDEN', message: 'Sign in from the dashboard itself.' });
      if (!deps.keySignIn)
        throw new ApiError({
          code: 'FORBIDDEN',
          message:
            'Signing in with a key is turned off: sign in with your email and password or single sign-on (the operator can allow key sign-in with VIGIL_DASHBOARD_KEY_SIGN_IN=on).',
        });
      const now = clock.now();
      const decision = await deps.limiter.hitIp(`dashboard sign-in ${request.ip}`, SIGN_IN_PER_MINUTE, now);
      if (!decision.allowed) {
        reply.header('Retry-After', String(decision.retryAfter));
        throw new ApiError({ code: 'RATE_LIMITED', message: 'Too many sign-in attempts; retry in a minute.', retryAfter: decision.retryAfter });
      }
      const auth = await deps.authenticator.authenticate(request.body.key.trim());
      if (!auth.ok) throw new ApiError({ code: 'UNAUTHORIZED', message: auth.message });
      if (auth.ctx.keyKind !== 'secret')
        throw new ApiError({ code: 'FORBIDDEN', message: 'Sign in with a secret key; publishable keys can only send events.' });
      const id = randomToken();
      const csrf = randomToken();
      const expiresAt = now + SESSION_TTL_MS;
      // Sign-in is where expired sessions are swept (the fresh id matches no row).
      await store.sessions.deleteDashboardSession(hashToken(id), now);
      await store.sessions.createDashboardSession({
        idHash: hashToken(id),
        accountId: auth.ctx.account.id,
        keyId: auth.ctx.keyId,
        csrfToken: csrf,
        createdAt: now,
        expiresAt,
      });
      setSessionCookie(request, reply, id, SESSION_TTL_MS / 1000);
      reply.code(201);
      return { account: accountView(auth.ctx), csrf_token: csrf, expires_at: new Date(expiresAt).toISOString() };
    },
  });

  app.get('/dashboard/api/session', {
    schema: { ...hidden, response: { ...ErrorResponses } },
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      const id = sessionIdFrom(request.headers.cookie);
      const person = id === undefined ? undefined : await deps.sessions.memberSession(id);
      if (person) return memberSessionView(store, deps.plans, person.session, person.user, person.member);
      const found = id === undefined || !deps.keySignIn ? undefined : await store.sessions.findDashboardSession(hashToken(id), clock.now());
      const auth = found && (await deps.authenticator.authenticateHash(found.keyHash));
      // Being signed out is an ordinary answer here (the page asks on every load), not a failure.
      if (!found || !auth?.ok) {
        reply.code(204);
        return null;
      }
      return {
        account: accountView(auth.ctx),
        csrf_token: found.session.csrfToken,
        expires_at: new Date(found.session.expiresAt).toISOString(),
      };
    },
  });

  // Sign-out is state-changing: the guards check the CSRF token of the session it ends.
  app.delete('/dashboard/api/session', {
    config: { access: 'any' },
    schema: { ...hidden, response: { ...ErrorResponses } },
    handler: async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      const id = sessionIdFrom(request.headers.cookie);
      if (id === undefined || request.headers[CSRF_HEADER] === undefined) throw new ApiError({ code: 'UNAUTHORIZED', message: 'Not signed in.' });
      const principal = requestAccount(request).principal;
      if (principal.kind === 'member') await store.members.revokeSession(principal.userId, principal.sessionId, clock.now());
      else await store.sessions.deleteDashboardSession(hashToken(id), clock.now());
      setSessionCookie(request, reply, '', 0);
      reply.code(204);
      return null;
    },
  });

  app.get<{ Querystring: Static<typeof OverviewQuery> }>('/dashboard/api/overview', {
    config: { access: 'read' },
    schema: {
      summary:
        'Dashboard overview: events and alerts over time (by event time), open alerts by severity, the riskiest actors and addresses, kill chains in progress with the events of each stage. events_capped: the range holds more events than the overview reads (50,000), and the event counts and top lists are those of its newest events by arrival',
      tags: ['dashboard'],
      security: KeyAuth,
      querystring: OverviewQuery,
      response: { ...ErrorResponses },
    },
    handler: async (request) => {
      const range = RANGES[request.query.range ?? '24h'];
      const now = clock.now();
      const since = Math.floor((now - range.ms) / range.bucket + 1) * range.bucket;
      const o = await store.stats.overview(accountIdOf(request), since, range.bucket);
      return {
        since: new Date(since).toISOString(),
        bucket_ms: range.bucket,
        events: o.events,
        alerts: o.alerts,
        open_alerts_by_severity: o.openBySeverity,
        events_capped: o.eventsCapped,
        top_actors: o.topActors.map((t) => ({ actor_id: t.value, count: t.count, max_risk: t.maxRisk, alerts: t.alerts })),
        top_ips: o.topIps.map((t) => ({ ip: t.value, count: t.count, max_risk: t.maxRisk, alerts: t.alerts })),
        chains_in_progress: (await alertViewsWithAssignees(store.members, o.chains)).map((a) => {
          const stages = Array.isArray(a.details.stages) ? (a.details.stages as unknown[]) : [];
          return { ...a, stages, stage_events: stageEvents(stages) };
        }),
      };
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/dashboard/api/alerts/:id/notes', {
    config: { access: 'read' },
    schema: {
      summary: 'Notes written with an alert status change, and the alert’s status and assignee changes, oldest first, each with its author',
      tags: ['dashboard'],
      security: KeyAuth,
      params: IdParams,
      response: { ...ErrorResponses },
    },
    handler: async (request) => {
      const accountId = accountIdOf(request);
      if (!(await store.alerts.getAlert(accountId, request.params.id))) throw new ApiError({ code: 'NOT_FOUND', message: `No alert ${request.params.id}.` });
      const notes = await store.alerts.listAlertNotes(accountId, request.params.id);
      const changes = await store.audit.list(accountId, { targetId: request.params.id, action: 'alert.' }, HISTORY_LIMIT);
      const history = changes.items.filter((e) => HISTORY_ACTIONS.has(e.action) && e.targetKind === 'alert').reverse();
      return { data: notes.map(noteView), history: history.map(historyView) };
    },
  });

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof NoteBody> }>('/dashboard/api/alerts/:id/notes', {
    config: { access: 'triage' },
    schema: {
      summary: 'Add a note to an alert (with the status it was given)',
      tags: ['dashboard'],
      security: KeyAuth,
      params: IdParams,
      body: NoteBody,
      response: { ...ErrorResponses },
    },
    handler: async (request, reply) => {
      const accountId = accountIdOf(request);
      if (!(await store.alerts.getAlert(accountId, request.params.id))) throw new ApiError({ code: 'NOT_FOUND', message: `No alert ${request.params.id}.` });
      const note = await addAlertNote({ store, clock, audit: deps.audit }, request, request.params.id, request.body.status as AlertStatus, request.body.note);
      reply.code(201);
      return noteView(note);
    },
  });

  const serve = (path: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const file = deps.files.get(path);
    if (!file) {
      if (path === 'index.html') throw new ApiError({ code: 'NOT_FOUND', message: 'The dashboard is not built: run "npm run build".' });
      throw new ApiError({ code: 'NOT_FOUND', message: `No file ${path}.` });
    }
    reply.header('Content-Type', file.type);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('Vary', 'Accept-Encoding');
    if (path === 'index.html') {
      reply.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      reply.header('X-Frame-Options', 'DENY');
      reply.header('Cache-Control', 'no-cache');
    } else reply.header('Cache-Control', path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
    const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
    if (gzip) reply.header('Content-Encoding', 'gzip');
    return reply.send(gzip ? file.gzip : file.body);
  };
  app.get('/dashboard', { schema: hidden }, serve('index.html'));
  app.get('/dashboard/', { schema: hidden }, serve('index.html'));
  app.get<{ Params: { '*': string } }>('/dashboard/*', { schema: hidden }, async (request, reply) => serve(request.params['*'])(request, reply));
}
