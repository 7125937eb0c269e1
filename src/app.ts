import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Gauge } from 'prom-client';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Accounts } from './accounts/accounts.js';
import type { Config } from './config/config.js';
import { Authenticator } from './http/authenticator.js';
import { AllowedOrigins, registerCorsPreflight } from './http/cors.js';
import { limitConnectionsPerIp, type ConnectionCounter } from './http/connection-limits.js';
import { ApiError, ERROR_STATUS, errorBody, parseJsonBody } from './http/errors.js';
import { validationDetails } from './http/validation-errors.js';
import type { ErrorCode, Rejection } from './event/rejection.js';
import { ADMIN_FAILURE_LIMITS, registerGuards } from './http/guards.js';
import { FailureThrottle } from './http/failure-throttle.js';
import { registerNulGuard } from './http/nul-guard.js';
import { loggedUrl, QuietRequestLog, requestLoggerFactory } from './http/request-logger.js';
import { createMetrics, type Metrics } from './http/metrics.js';
import { registerAdminRoutes } from './http/routes/admin.js';
import { registerAuditRoutes } from './http/routes/audit.js';
import { registerSubjectRoutes } from './http/routes/subjects.js';
import { ErasureJobs } from './privacy/erasure.js';
import { PseudonymKeys } from './privacy/pseudonym.js';
import { pseudonymsOf, type SubjectIdentifier } from './privacy/subject.js';
import { SuppressionList } from './privacy/suppression.js';
import { MemoryDryRunStates } from './threat-models/dry-run-states.js';
import { registerIngestRoutes } from './http/routes/ingest.js';
import { registerKeyRoutes } from './http/routes/keys.js';
import { measuredAdmission } from './http/admission-metrics.js';
import { registerOpsRoutes } from './http/routes/ops.js';
import { registerReadRoutes } from './http/routes/read.js';
import { registerEntityRoutes } from './http/routes/entities.js';
import { registerAlertCampaignRoutes } from './http/routes/alert-campaigns.js';
import { registerSearchRoutes } from './http/routes/search.js';
import { registerSettingsRoutes } from './http/routes/settings.js';
import { registerStreamRoutes } from './http/routes/stream.js';
import { registerWebhookRoutes } from './http/routes/webhooks.js';
import { registerMemberRoutes } from './http/routes/members.js';
import { smtpMailer } from './team/mailer.js';
import { registerThreatModelRoutes } from './http/routes/threat-models.js';
import { registerStateStoreMetrics } from './http/state-store-metrics.js';
import { registerThreatModelMetrics } from './http/threat-model-metrics.js';
import { trackRoutesFor405 } from './http/method-not-allowed.js';
import { sameSecret } from './http/secrets.js';
import { SessionAuthenticator } from './http/session-auth.js';
import { AuditTrail, SYSTEM } from './audit/trail.js';
import { AccountStamps } from './detection/state/stamps.js';
import { registerDashboardRoutes } from './dashboard/routes.js';
import { registerSsoRoutes } from './http/routes/sso.js';
import { OidcSignIn } from './team/oidc.js';
import { loadStaticFiles } from './dashboard/static-files.js';
import { ipLimitResolver } from './limits/ip-limits.js';
import type { CommitGroup } from './pipeline/commit-group.js';
import { composeIngestPipeline, type PipelineBackends } from './pipeline/compose.js';
import { StoreUnavailableError } from './storage/store.js';
import { LocalLiveFeed } from './storage/live-feed.js';
import type { DryRunLimits } from './threat-models/dry-run.js';
import type { DryRunStates } from './threat-models/dry-run-states.js';
import { newId } from './util/ids.js';
import type { Enrichment } from './event/enrichment.js';
import type { WebhookDispatcher } from './webhooks/dispatcher.js';
import { LOOPBACK_RANGES, systemResolver, type SsrfGuard } from './webhooks/ssrf.js';

/** Everything the HTTP app needs, built by services.ts (or by a test): the pipeline's backends and the app's own. */
export interface AppDeps extends PipelineBackends {
  readonly config: Config;
  /** A pino logger shared with start-up code; without it the app does not log. */
  readonly logger?: FastifyBaseLogger;
  /** The pipeline's enrichment; with an address look-up, entity summaries show an address's network as it is now. */
  readonly enrichment: PipelineBackends['enrichment'] & { readonly lookUpAddress?: (ip: string) => Enrichment };
  /** Extra facts for /readyz. */
  readonly status?: () => Record<string, unknown>;
  /** An alert was resolved or marked a false positive: the next sighting must open a new one. */
  readonly alertClosed?: (accountId: string, type: string, subject: string) => Promise<void>;
  /** Present in scale-out mode. */
  readonly redisHealth?: { readonly degraded: boolean };
  /** Which addresses webhook URLs may reach (default: public addresses, plus the configured ranges). */
  readonly webhookGuard?: SsrfGuard;
  /** Delivers the webhook outbox from this process; the test route uses it to send at once. */
  readonly webhookDispatcher?: WebhookDispatcher;
  /** Bounds of threat-model dry runs (default DRY_RUN_LIMITS). */
  readonly dryRunLimits?: DryRunLimits;
  /** Paged dry runs' states between pages (Redis when scaled out; the process's memory otherwise). */
  readonly dryRunStates?: DryRunStates;
}

export interface VigilApp {
  readonly app: FastifyInstance;
  readonly metrics: Metrics;
  readonly accounts: Accounts;
  readonly commits: CommitGroup;
  /** Open connections per source address (the per-IP connection cap). */
  readonly connections: ConnectionCounter;
  /** Data-subject erasure jobs: this instance's runner. */
  readonly erasures: ErasureJobs;
  /** Stops accepting requests, drains in-flight ones and flushes the commit group. */
  close(): Promise<void>;
}

function rejectionFor(error: FastifyError): Rejection {
  if (error instanceof ApiError) return error.rejection;
  // Authentication, reads and admin calls reach the store outside the ingest pipeline.
  if (error instanceof StoreUnavailableError) return { code: 'UNAVAILABLE', message: 'Storage is unavailable; retry shortly.', retryAfter: 1 };
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than this endpoint accepts (single event: 64 KiB, batch: 1 MiB by default).' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as JSON with "Content-Type: application/json".' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'INVALID_JSON', message: 'The Content-Length header does not match the body.' };
    case 'FST_ERR_VALIDATION': {
      const details = validationDetails(error.validation ?? []);
      return { code: 'INVALID_REQUEST', message: details.map((d) => d.message).join('; ') || error.message, details };
    }
  }
  const status = error.statusCode ?? 500;
  if (status === 404) return { code: 'NOT_FOUND', message: error.message };
  if (status >= 400 && status < 500) return { code: 'INVALID_REQUEST', message: error.message };
  return { code: 'INTERNAL', message: 'Internal error; it has been logged with the request id.' };
}

/**
 * Requests Node refuses before any route sees them (headers over the size limit, a bare CR or
 * LF, a malformed request line, headers or body not received in time) answer with the same
 * error body and X-Request-Id as every other answer, then the connection is closed.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const rejection: Rejection =
      status === 431
        ? { code: 'HEADERS_TOO_LARGE', message: 'The request headers are larger than the server accepts.' }
        : status === 408
          ? { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' }
          : { code: 'INVALID_REQUEST', message: 'The request is not valid HTTP/1.1 (malformed request line or headers).' };
    const id = newId('req');
    const body = JSON.stringify(errorBody(rejection, id));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export async function buildApp(deps: AppDeps): Promise<VigilApp> {
  const { config } = deps;
  const metrics = createMetrics();
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger, childLoggerFactory: requestLoggerFactory, logController: new QuietRequestLog() } : { logger: false }),
    genReqId: () => newId('req'),
    requestIdHeader: false,
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    bodyLimit: config.maxBatchBytes,
    // Slow or abusive clients: an idle socket is closed after 30 s, a whole request (headers
    // and body) must arrive within 30 s, a keep-alive socket idles at most 10 s and serves at
    // most VIGIL_MAX_REQUESTS_PER_SOCKET requests (then `Connection: close`; Node answers 503
    // to a client that ignores it). Headers alone get 10 s (set on the server below).
    connectionTimeout: 30_000,
    keepAliveTimeout: 10_000,
    requestTimeout: 30_000,
    maxRequestsPerSocket: config.maxRequestsPerSocket,
    // Errors raised by the router before any route runs (bad percent-encoding, an over-long
    // path parameter) still answer with the error body.
    frameworkErrors: (error, request, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const rejection: Rejection = tooLong
        ? { code: 'NOT_FOUND', message: 'No such record: the id is too long.' }
        : { code: 'INVALID_REQUEST', message: 'The URL is not valid (bad percent-encoding?).' };
      void (reply as FastifyReply)
        .code(tooLong ? 404 : 400)
        .type('application/json')
        .header('X-Request-Id', request.id)
        .send(errorBody(rejection, request.id));
    },
    // verbose: each error carries its schema, which the error messages are worded from.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, verbose: true } },
    clientErrorHandler: answerClientError,
  });

  app.server.headersTimeout = 10_000;
  const connections = limitConnectionsPerIp(app.server, { maxPerIp: config.maxConnectionsPerIp, exempt: config.trustProxy });

  const authenticator = new Authenticator(deps.store.accounts, config.plans, deps.clock, { stamps: new AccountStamps(deps.state) });
  const allowedOrigins = new AllowedOrigins(deps.store.accounts, deps.clock);
  const sessions = new SessionAuthenticator({ store: deps.store, authenticator, plans: config.plans, clock: deps.clock, keySignIn: config.team.keySignIn });
  const audit = new AuditTrail(deps.store.audit, deps.clock);
  // The instance whose suspension was stored records it; a failed entry leaves the model suspended.
  deps.threatModelCosts?.onSuspended((s) =>
    audit
      .record(
        { accountId: s.accountId, actor: SYSTEM, ip: null, userAgent: null },
        { action: 'threat_model.suspended', target: { kind: 'threat_model', id: s.modelId }, details: { version: s.version, reason: s.reason } },
      )
      .then(
        () => undefined,
        (err: unknown) => deps.logger?.warn({ err, account: s.accountId, model: s.modelId }, 'threat model suspended, but its audit entry could not be stored'),
      ),
  );
  const accounts = new Accounts(deps.store.accounts, config.plans, deps.clock, {
    audit,
    changed: async (accountId) => {
      allowedOrigins.invalidate();
      await authenticator.changed(accountId);
    },
  });
  const allowHttpLoopback = config.team.ssoAllowHttpLoopback;
  // A provider on this machine is reachable once the operator allows http on loopback for providers.
  const providerRanges = [...config.team.ssoAllowCidrs, ...(allowHttpLoopback ? LOOPBACK_RANGES : [])];
  const accountProviderGuard = { allowed: providerRanges, resolve: deps.webhookGuard?.resolve ?? systemResolver };
  const oidc = new OidcSignIn({ store: deps.store, clock: deps.clock, audit, instance: config.team.oidc, allowHttpLoopback, accountProviderGuard });
  // Streams need a feed whatever opened the backends: embedded, the process's own.
  const live = deps.live ?? new LocalLiveFeed();
  const pseudonymKeys = deps.pseudonyms ?? new PseudonymKeys(config.pseudonymSecret);
  const suppressions = new SuppressionList(deps.store.subjects, deps.state, pseudonymKeys);
  const { pipeline, commits } = composeIngestPipeline(Object.assign({}, deps, { live, suppressions }), {
    commits: {
      windowMs: config.commitWindowMs,
      maxEvents: config.commitMaxEvents,
      onCommit: ({ events, durationMs, ok }) => {
        metrics.commitGroupSize.observe(events);
        metrics.commitDuration.observe({ ok: String(ok) }, durationMs / 1000);
      },
    },
    hooks: {
      onEvents: (outcome, n) => metrics.events.inc({ outcome }, n),
      onUnknownField: (family) => metrics.unknownFields.inc({ family }),
      degraded: deps.redisHealth ? () => (deps.redisHealth as { degraded: boolean }).degraded : undefined,
    },
  });
  const { admission, onOverloaded } = measuredAdmission(metrics.registry, {
    budgetBytes: config.ingestInFlightBytes,
    maxInFlight: config.ingestMaxInFlight,
    maxWaiting: config.ingestMaxWaiting,
    maxWaitMs: config.ingestMaxWaitMs,
  });
  // One place for the dry runs' saved states, so an erasure reaches them too.
  const dryRunStates = deps.dryRunStates ?? new MemoryDryRunStates();
  const aliasesOf = (accountId: string, identifiers: readonly SubjectIdentifier[]) => pseudonymsOf(pseudonymKeys, accountId, identifiers);
  const erasures = new ErasureJobs({
    aliasesOf,
    suppressionHashes: (accountId, identifiers) => suppressions.entriesOf(accountId, identifiers) ?? [],
    suppressionsChanged: (accountId) => suppressions.changed(accountId),
    store: deps.store,
    state: deps.state,
    dryRunStates,
    clock: deps.clock,
    leaseMs: config.subjectJobLeaseMs,
    rewrite: config.erasureRewrite,
    pollMs: Math.max(500, Math.round(config.subjectJobLeaseMs / 3)),
    onError: (err, job) => deps.logger?.warn({ err, job: job.id, account: job.accountId }, 'erasure job interrupted; it is retried after its lease'),
  });
  if (deps.redisHealth) {
    const health = deps.redisHealth;
    metrics.registry.registerMetric(
      new Gauge({
        name: 'vigil_backend_degraded',
        help: '1 while Redis is unreachable and local state is used',
        registers: [],
        collect() {
          this.set(health.degraded ? 1 : 0);
        },
      }),
    );
  }
  if (deps.threatModels) registerThreatModelMetrics(metrics.registry, deps.threatModels, deps.threatModelCosts);

  const stateUsage = deps.state.usage?.bind(deps.state);
  if (stateUsage) registerStateStoreMetrics(metrics.registry, stateUsage);

  // JSON only. The ingestion routes get the text as it came and parse it in their handler, so
  // the text is dropped before the events wait for their commit (routes/ingest.ts, takeBody).
  const parseJson = (request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void) => {
    if (request.vigil?.access === 'ingest') return done(null, body);
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      done(err as ApiError, undefined);
    }
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => parseJson(request, body as string, done));
  // navigator.sendBeacon can only send a CORS-safelisted type without a preflight: the browser
  // client's page-hide beacon sends JSON as text/plain, accepted from beacons only (key in the URL).
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, body, done) => {
    if (request.vigil?.beacon !== true) {
      done(new ApiError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as JSON with "Content-Type: application/json".' }), undefined);
      return;
    }
    parseJson(request, body as string, done);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const rejection = rejectionFor(error);
    const status = ERROR_STATUS[rejection.code as ErrorCode];
    // An instance shedding load answers thousands of OVERLOADED a second: they are counted in
    // /metrics (vigil_admission_rejected_total), and a log line each would add to the overload.
    if (status >= 500 && rejection.code !== 'OVERLOADED') request.log.error({ err: error }, 'request failed');
    if ((rejection.code === 'RATE_LIMITED' || rejection.code === 'UNAVAILABLE') && !reply.hasHeader('Retry-After'))
      reply.header('Retry-After', String(rejection.retryAfter ?? 1));
    reply.code(status).type('application/json').send(errorBody(rejection, request.id));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody({ code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}.` }, request.id));
  });
  const accessLog = deps.logger !== undefined && ['debug', 'trace'].includes(deps.logger.level);
  // Callback-style hooks: both run on every request, and an async hook costs a promise each time.
  // The id goes on the reply first thing, so every answer carries it, errors included.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = (request.vigil === null ? request.routeOptions.url : request.vigil.route) ?? 'unmatched';
    metrics.recordRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (accessLog)
      request.log.debug(
        { method: request.method, url: loggedUrl(request), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
        'request completed',
      );
    done();
  });

  await app.register(swagger, {
    // Shared schemas keep their $id as their name in components.schemas (default: def-N).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Vigil', version: '1', description: 'Security event ingestion, enrichment, detection and risk scoring.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  registerGuards(app, {
    authenticator,
    limiter: deps.limiter,
    clock: deps.clock,
    ipLimitFor: ipLimitResolver(config),
    adminToken: config.adminToken,
    checkAdminToken: (presented) => config.adminToken !== undefined && presented !== undefined && sameSecret(presented, config.adminToken),
    adminFailures: new FailureThrottle(ADMIN_FAILURE_LIMITS),
    onAdminFailure: (outcome) => metrics.adminAuthFailures.inc({ outcome }),
    sessions,
  });
  registerNulGuard(app);
  // Before the 405 tracker so OPTIONS stays out of the Allow lists.
  registerCorsPreflight(app, allowedOrigins);
  const add405Routes = trackRoutesFor405(app);
  registerIngestRoutes(app, {
    pipeline,
    admission,
    onOverloaded,
    limiter: deps.limiter,
    clock: deps.clock,
    maxEventBytes: config.maxEventBytes,
    maxBatchBytes: config.maxBatchBytes,
  });
  registerReadRoutes(app, { store: deps.store, catalog: deps.catalog, clock: deps.clock, alertClosed: deps.alertClosed, audit });
  registerAlertCampaignRoutes(app, { store: deps.store, clock: deps.clock, alertClosed: deps.alertClosed, audit });
  registerEntityRoutes(app, { store: deps.store, clock: deps.clock, lookUpAddress: deps.enrichment.lookUpAddress });
  registerStreamRoutes(app, { live });
  registerSearchRoutes(app, { store: deps.store, clock: deps.clock });
  registerAuditRoutes(app, { audit: deps.store.audit });
  registerSubjectRoutes(app, { store: deps.store, clock: deps.clock, jobs: erasures, audit, aliasesOf, suppressions });
  registerAdminRoutes(app, { accounts, store: deps.store });
  registerKeyRoutes(app, { accounts });
  registerSettingsRoutes(app, {
    store: deps.store,
    changed: () => authenticator.invalidate(),
    audit,
    pseudonymsAvailable: config.pseudonymSecret !== undefined,
  });
  if (deps.threatModels)
    registerThreatModelRoutes(app, {
      store: deps.store,
      clock: deps.clock,
      registry: deps.threatModels,
      limiter: deps.limiter,
      changesPerMinute: config.threatModelChangesPerMinute,
      settingsChanged: () => authenticator.invalidate(),
      audit,
      ...(deps.dryRunLimits ? { dryRunLimits: deps.dryRunLimits } : {}),
      dryRunStates,
    });
  registerWebhookRoutes(app, {
    webhooks: deps.store.webhooks,
    clock: deps.clock,
    config: config.webhooks,
    guard: deps.webhookGuard ?? { allowed: config.webhooks.allowCidrs, resolve: systemResolver },
    dispatcher: deps.webhookDispatcher,
    audit,
  });
  const team = { publicUrl: config.team.publicUrl, mailer: config.team.smtp ? smtpMailer(config.team.smtp) : undefined };
  registerMemberRoutes(app, { store: deps.store, audit, clock: deps.clock, ...team });
  registerDashboardRoutes(app, {
    store: deps.store,
    authenticator,
    sessions,
    audit,
    plans: config.plans,
    limiter: deps.limiter,
    clock: deps.clock,
    files: loadStaticFiles(),
    keySignIn: config.team.keySignIn,
    team,
    oidc,
  });
  registerSsoRoutes(app, { store: deps.store, clock: deps.clock, audit, allowHttpLoopback, publicUrl: config.team.publicUrl });
  registerOpsRoutes(app, {
    store: deps.store,
    metrics,
    status: deps.status ?? (() => ({})),
    overloaded: () => admission.overloaded,
    metricsToken: config.metricsToken,
    // With a listener of its own, /metrics is not served on the public port at all.
    serveMetrics: config.metricsPort === undefined,
  });
  add405Routes();

  await app.ready();
  erasures.start();
  return {
    app,
    metrics,
    accounts,
    commits,
    connections,
    erasures,
    async close() {
      await erasures.stop();
      await app.close();
      await commits.flush();
    },
  };
}
