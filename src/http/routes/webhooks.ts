import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebhookConfig } from '../../config/config.js';
import type { Clock } from '../../util/clock.js';
import { newId } from '../../util/ids.js';
import type { WebhookDispatcher } from '../../webhooks/dispatcher.js';
import { pendingDelivery } from '../../storage/webhooks/outbox.js';
import { newSigningSecret } from '../../webhooks/signing.js';
import { checkUrl, type SsrfGuard } from '../../webhooks/ssrf.js';
import type { EndpointPatch, WebhookStore } from '../../storage/webhooks/store.js';
import { SEVERITIES, WEBHOOK_FORMATS, type WebhookDelivery, type WebhookEndpoint } from '../../storage/webhooks/types.js';
import type { AlertRow } from '../../storage/types.js';
import { ApiError } from '../errors.js';
import { NoFilters } from '../list-filter.js';
import { ErrorResponses, integerQuery, KeyAuth, PageLimit, PageQuery } from '../schemas.js';
import { requestAccount } from '../context.js';
import { HOUR_MS } from '../../util/duration.js';
import { changesBetween, type AuditTrail } from '../../audit/trail.js';
import { auditOrigin } from '../audit-origin.js';

export interface WebhookRouteDeps {
  readonly webhooks: WebhookStore;
  readonly clock: Clock;
  readonly config: WebhookConfig;
  readonly guard: SsrfGuard;
  /** Absent when this process does not dispatch; the test delivery then waits for the dispatcher. */
  readonly dispatcher?: WebhookDispatcher;
  readonly audit: AuditTrail;
}

const MAX_OVERLAP_HOURS = 168;
const DEFAULT_OVERLAP_HOURS = 24;

const Format = Type.Union(WEBHOOK_FORMATS.map((f) => Type.Literal(f)));
const Severity = Type.Union(SEVERITIES.map((s) => Type.Literal(s)));
const Filters = Type.Object(
  {
    min_severity: Type.Optional(Severity),
    alert_types: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.*:-]+$' }), {
        maxItems: 50,
        description: 'Alert type globs; * matches any run of characters. Empty: every type.',
      }),
    ),
    kill_chains_only: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Description = Type.String({ maxLength: 200 });
const CreateBody = Type.Object(
  { url: Url, description: Type.Optional(Description), format: Type.Optional(Format), filters: Type.Optional(Filters), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Description),
    format: Type.Optional(Format),
    filters: Type.Optional(Filters),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const RotateBody = Type.Object(
  {
    overlap_hours: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_OVERLAP_HOURS, description: `Hours the old secret still signs (default ${DEFAULT_OVERLAP_HOURS}).` }),
    ),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const DeliveriesQuery = Type.Object(PageQuery, { additionalProperties: false });

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function endpointView(e: WebhookEndpoint, now: number) {
  const overlapping = e.previousSecret !== null && (e.previousSecretUntil ?? 0) > now;
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    format: e.format,
    filters: { min_severity: e.minSeverity, alert_types: e.alertTypes, kill_chains_only: e.killChainsOnly },
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    previous_secret_expires_at: overlapping ? iso(e.previousSecretUntil) : null,
    failing_since: iso(e.failingSince),
    created_at: iso(e.createdAt),
    updated_at: iso(e.updatedAt),
  };
}

export function deliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    event: d.event,
    alert_id: d.alertId,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    last_attempt_at: iso(d.lastAttemptAt),
    last_answer: d.lastAttemptAt === null ? null : { status: d.lastStatus, error: d.lastError },
    created_at: iso(d.createdAt),
    finished_at: iso(d.finishedAt),
  };
}

/** The alert a test delivery carries: marked as a test in its type and subject. */
function testAlert(accountId: string, at: number): AlertRow {
  return {
    id: 'alr_00000000000000000000000000',
    accountId,
    type: 'webhook_test',
    severity: 'low',
    subject: 'test delivery',
    status: 'open',
    count: 1,
    firstSeen: at,
    lastSeen: at,
    actorId: null,
    eventIds: [],
    details: { test: true },
  };
}

/** The fields of an endpoint its audit entries compare (the view holds no secret). */
const AUDITED_FIELDS = ['url', 'description', 'format', 'filters', 'enabled', 'disabled_reason'];

/** Endpoint ids are `whk_` + 26 Crockford base32 characters; anything else is not found without a query. */
const ENDPOINT_ID = /^whk_[0-9A-Z]{26}$/;

/** /v1/webhooks: outbound alert endpoints of the key's account (secret keys only). */
export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  const { webhooks, clock } = deps;
  const route = (summary: string) => ({ summary, tags: ['webhooks'], security: KeyAuth, response: { ...ErrorResponses } });
  const accountOf = (request: FastifyRequest): string => requestAccount(request).account.id;
  const endpointOf = async (accountId: string, id: string): Promise<WebhookEndpoint> => {
    const endpoint = ENDPOINT_ID.test(id) ? await webhooks.getEndpoint(accountId, id) : undefined;
    if (!endpoint) throw new ApiError({ code: 'NOT_FOUND', message: `No webhook ${id}.` });
    return endpoint;
  };
  const checkedUrl = async (url: string): Promise<string> => {
    const checked = await checkUrl(url, deps.guard);
    if (!checked.ok) throw new ApiError({ code: 'INVALID_REQUEST', message: `url ${checked.reason}`, details: [{ field: 'url', message: checked.reason }] });
    return checked.url.toString();
  };
  /** Records a change of an endpoint, its fields before and after; an update that changed none is no change. */
  const record = async (
    request: FastifyRequest,
    action: string,
    id: string,
    before?: WebhookEndpoint,
    after?: WebhookEndpoint,
    details?: Record<string, unknown>,
  ) => {
    const now = clock.now();
    const view = (e: WebhookEndpoint | undefined) => (e === undefined ? undefined : endpointView(e, now));
    const changes = changesBetween(view(before), view(after), AUDITED_FIELDS);
    if (action === 'webhook.updated' && Object.keys(changes).length === 0) return;
    await deps.audit.record(auditOrigin(request), { action, target: { kind: 'webhook', id }, changes, ...(details === undefined ? {} : { details }) });
  };
  const filterColumns = (filters: Static<typeof Filters> | undefined): EndpointPatch => ({
    ...(filters?.min_severity !== undefined ? { min_severity: filters.min_severity } : {}),
    ...(filters?.alert_types !== undefined ? { alert_types: JSON.stringify(filters.alert_types) } : {}),
    ...(filters?.kill_chains_only !== undefined ? { kill_chains_only: filters.kill_chains_only ? 1 : 0 } : {}),
  });

  app.get('/v1/webhooks', { config: { access: 'read' }, schema: { ...route('List webhook endpoints'), querystring: NoFilters } }, async (request) => {
    const now = clock.now();
    return { data: (await webhooks.listEndpoints(accountOf(request))).map((e) => endpointView(e, now)) };
  });

  app.post<{ Body: Static<typeof CreateBody> }>('/v1/webhooks', {
    config: { access: 'manage' },
    schema: { ...route('Create a webhook endpoint; its signing secret is shown this once'), body: CreateBody },
    handler: async (request, reply) => {
      const accountId = accountOf(request);
      const body = request.body;
      const url = await checkedUrl(body.url);
      const limit = deps.config.maxEndpointsPerAccount;
      if ((await webhooks.countEndpoints(accountId)) >= limit)
        throw new ApiError({ code: 'FORBIDDEN', message: `An account may have at most ${limit} webhook endpoints; delete one first.` });
      const now = clock.now();
      const secret = newSigningSecret();
      const endpoint = await webhooks.createEndpoint({
        id: newId('whk', now),
        account_id: accountId,
        url,
        description: body.description ?? '',
        format: body.format ?? 'vigil',
        min_severity: body.filters?.min_severity ?? 'low',
        alert_types: JSON.stringify(body.filters?.alert_types ?? []),
        kill_chains_only: body.filters?.kill_chains_only ? 1 : 0,
        enabled: body.enabled === false ? 0 : 1,
        disabled_reason: null,
        secret,
        previous_secret: null,
        previous_secret_until: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      });
      await record(request, 'webhook.created', endpoint.id, undefined, endpoint);
      reply.code(201);
      return { ...endpointView(endpoint, now), secret };
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/v1/webhooks/:id', {
    config: { access: 'read' },
    schema: { ...route('One webhook endpoint'), params: IdParams },
    handler: async (request) => endpointView(await endpointOf(accountOf(request), request.params.id), clock.now()),
  });

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof PatchBody> }>('/v1/webhooks/:id', {
    config: { access: 'manage' },
    schema: { ...route('Change a webhook endpoint; enabling it clears a disabled reason'), params: IdParams, body: PatchBody },
    handler: async (request) => {
      const accountId = accountOf(request);
      const endpoint = await endpointOf(accountId, request.params.id);
      const body = request.body;
      const patch: EndpointPatch = {
        ...(body.url !== undefined ? { url: await checkedUrl(body.url) } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.format !== undefined ? { format: body.format } : {}),
        ...filterColumns(body.filters),
        ...(body.enabled === true ? { enabled: 1, disabled_reason: null, failing_since: null } : {}),
        ...(body.enabled === false ? { enabled: 0 } : {}),
      };
      const now = clock.now();
      const updated = await webhooks.updateEndpoint(accountId, endpoint.id, patch, now);
      if (!updated) throw new ApiError({ code: 'NOT_FOUND', message: `No webhook ${endpoint.id}.` });
      await record(request, 'webhook.updated', endpoint.id, endpoint, updated);
      return endpointView(updated, now);
    },
  });

  app.delete<{ Params: Static<typeof IdParams> }>('/v1/webhooks/:id', {
    config: { access: 'manage' },
    schema: { ...route('Delete a webhook endpoint and its deliveries'), params: IdParams },
    handler: async (request, reply) => {
      const accountId = accountOf(request);
      const endpoint = await endpointOf(accountId, request.params.id);
      if (!(await webhooks.deleteEndpoint(accountId, endpoint.id))) throw new ApiError({ code: 'NOT_FOUND', message: `No webhook ${endpoint.id}.` });
      await record(request, 'webhook.deleted', endpoint.id, endpoint, undefined);
      reply.code(204);
    },
  });

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof RotateBody> }>('/v1/webhooks/:id/rotate-secret', {
    config: { access: 'manage' },
    schema: { ...route('Replace the signing secret; the old one keeps signing for the overlap'), params: IdParams, body: RotateBody },
    // The body is optional: no body means the default overlap.
    preValidation: async (request) => {
      request.body ??= {};
    },
    handler: async (request) => {
      const accountId = accountOf(request);
      const endpoint = await endpointOf(accountId, request.params.id);
      const now = clock.now();
      const overlapMs = (request.body?.overlap_hours ?? DEFAULT_OVERLAP_HOURS) * HOUR_MS;
      const secret = newSigningSecret();
      const updated = await webhooks.updateEndpoint(
        accountId,
        endpoint.id,
        { secret, previous_secret: overlapMs > 0 ? endpoint.secret : null, previous_secret_until: overlapMs > 0 ? now + overlapMs : null },
        now,
      );
      if (!updated) throw new ApiError({ code: 'NOT_FOUND', message: `No webhook ${endpoint.id}.` });
      await record(request, 'webhook.secret_rotated', endpoint.id, undefined, undefined, { overlap_hours: overlapMs / HOUR_MS });
      return { ...endpointView(updated, now), secret };
    },
  });

  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof DeliveriesQuery> }>('/v1/webhooks/:id/deliveries', {
    config: { access: 'read' },
    schema: { ...route('Deliveries to an endpoint, newest first'), params: IdParams, querystring: DeliveriesQuery },
    handler: async (request) => {
      const accountId = accountOf(request);
      const endpoint = await endpointOf(accountId, request.params.id);
      const limit = integerQuery(request.query.limit, 'limit', PageLimit) ?? 50;
      const page = await webhooks.listDeliveries(accountId, endpoint.id, limit, request.query.cursor);
      return { data: page.items.map(deliveryView), next_cursor: page.nextCursor };
    },
  });

  app.post<{ Params: Static<typeof IdParams> }>('/v1/webhooks/:id/test', {
    config: { access: 'manage' },
    schema: { ...route('Send a test delivery now and answer with its outcome'), params: IdParams },
    handler: async (request, reply) => {
      const accountId = accountOf(request);
      const endpoint = await endpointOf(accountId, request.params.id);
      const now = clock.now();
      const row = pendingDelivery(accountId, endpoint.id, null, 'webhook.test', JSON.stringify(testAlert(accountId, now)), now);
      let attempted: WebhookDelivery | undefined;
      if (deps.dispatcher) attempted = await deps.dispatcher.deliverNow(row);
      // Without a dispatcher in this process, the delivery waits for another instance's.
      else await webhooks.insertDelivery(row);
      const delivery = attempted ?? (await webhooks.getDelivery(accountId, row.id));
      if (!delivery) throw new ApiError({ code: 'NOT_FOUND', message: `No webhook ${endpoint.id}.` });
      reply.code(attempted ? 200 : 202);
      return deliveryView(delivery);
    },
  });
}
