import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountContext } from '../../event/account.js';
import type { RateLimiter } from '../../limits/types.js';
import type { Store } from '../../storage/store.js';
import type { ThreatModelRow, ThreatModelVersionRow } from '../../storage/types.js';
import type { Clock } from '../../util/clock.js';
import { ulid } from '../../util/ids.js';
import { DAY_MS } from '../../util/duration.js';
import { schemaCheck } from '../../util/schema-check.js';
import { readTime } from '../../util/time-text.js';
import {
  DryRunner,
  modelKeyOf,
  readDryRunCursor,
  writeDryRunCursor,
  type DryRunCursor,
  type DryRunLimits,
  type DryRunModel,
} from '../../threat-models/dry-run.js';
import type { DryRunStates } from '../../threat-models/dry-run-states.js';
import { DEFAULT_SIGMA_FIELDS, validateFieldMapping, type FieldMapping } from '../../threat-models/field-mapping.js';
import { ModelChecker, type CheckOutcome } from '../../threat-models/checker.js';
import { withUniqueAlertType } from '../../threat-models/alert-types.js';
import type { CheckedModel } from '../../threat-models/check-thread.js';
import { accountMemoryProblem } from '../../threat-models/memory-budget.js';
import { LIMITS } from '../../threat-models/model.js';
import type { ThreatModelRegistry } from '../../threat-models/registry.js';
import { storedDefinition, storedSource, toStored } from '../../threat-models/stored.js';
import { ApiError } from '../errors.js';
import { NoFilters } from '../list-filter.js';
import { type ErrorDetail } from '../../event/rejection.js';
import { ErrorResponses, KeyAuth, noValidation, requestTime } from '../schemas.js';
import { requestAccount } from '../context.js';
import { changesBetween, type AuditTrail, type Changes } from '../../audit/trail.js';
import { auditOrigin } from '../audit-origin.js';

export interface ThreatModelRouteDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly registry: ThreatModelRegistry;
  /** Counts each account's changes, shared by every instance. */
  readonly limiter: RateLimiter;
  /**
   * Saves and deletions per account and minute: every change recompiles the model on every
   * instance, on the request thread, so their rate is bounded along with their size.
   */
  readonly changesPerMinute: number;
  /** Called after the account's settings change (the key cache holds the account). */
  readonly settingsChanged: () => void;
  /** Bounds of dry runs (default DRY_RUN_LIMITS). */
  readonly dryRunLimits?: DryRunLimits;
  /** Paged dry runs' states between pages (shared by the instances when scaled out). */
  readonly dryRunStates?: DryRunStates;
  readonly audit: AuditTrail;
}

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];
const BASE = '/v1/threat-models';
const MAX_RANGE_MS = 31 * DAY_MS;
const SIGMA_FIELDS_SETTING = 'sigma_fields';

const invalid = (errors: readonly ErrorDetail[]) =>
  new ApiError({ code: 'INVALID_THREAT_MODEL', message: `${errors[0]?.field ?? 'model'}: ${errors[0]?.message ?? 'invalid threat model'}`, details: errors });

function modelView(row: ThreatModelRow) {
  const source = storedSource(row);
  return {
    id: row.id,
    version: row.version,
    ...storedDefinition(row),
    format: source.format,
    ...(source.format === 'sigma' ? { sigma: source.rule } : {}),
    created_at: new Date(row.createdAt).toISOString(),
    updated_at: new Date(row.updatedAt).toISOString(),
    // Stopped for what it cost to evaluate (threat-models/budget.ts) until a new version is saved.
    suspended: row.suspendedAt === null ? null : { at: new Date(row.suspendedAt).toISOString(), reason: row.suspendedReason ?? '' },
  };
}

/**
 * What an audit entry compares between two versions of a model: its definition, its Sigma rule,
 * and the reason it is suspended (saving a version clears a suspension).
 */
function auditedFields(row: ThreatModelRow): Record<string, unknown> {
  const source = storedSource(row);
  return {
    ...storedDefinition(row),
    format: source.format,
    ...(source.format === 'sigma' ? { sigma: source.rule } : {}),
    suspended: row.suspendedAt === null ? null : row.suspendedReason,
  };
}

const RUNNING_STATE: ReadonlySet<string> = new Set(['enabled', 'suspended']);

/**
 * The audit entry of a saved version: enabled or disabled when only whether it runs changed
 * (re-enabling a suspended model enables it), else updated.
 */
function versionChange(before: ThreatModelRow, after: ThreatModelRow): { action: string; changes: Changes } {
  const changes = changesBetween(auditedFields(before), auditedFields(after));
  const names = Object.keys(changes);
  if (names.length > 0 && names.every((name) => RUNNING_STATE.has(name)))
    return { action: after.enabled ? 'threat_model.enabled' : 'threat_model.disabled', changes };
  return { action: 'threat_model.updated', changes };
}

function versionView(row: ThreatModelVersionRow) {
  const source = storedSource(row);
  return {
    version: row.version,
    created_at: new Date(row.createdAt).toISOString(),
    format: source.format,
    ...(source.format === 'sigma' ? { sigma: source.rule } : {}),
    definition: row.definition,
  };
}

function contextOf(request: FastifyRequest): AccountContext {
  const ctx = requestAccount(request);
  if (!ctx.plan.capabilities.threatModels)
    throw new ApiError({
      code: 'PLAN_UPGRADE_REQUIRED',
      message: `Custom threat models are available on the Pro and Business plans; this account is on ${ctx.plan.name}.`,
    });
  return ctx;
}

const fieldsOf = (ctx: AccountContext): FieldMapping => (ctx.account.settings[SIGMA_FIELDS_SETTING] as FieldMapping | undefined) ?? {};

const DRY_RUN_SHAPE = 'send {"model": ...} or {"id": "tm_…"}, with optional "from", "to" and "cursor"';
/** A dry run's body: a model to try, or the id of a saved one, and an optional range. */
const checkDryRun = schemaCheck(
  Type.Object(
    {
      model: Type.Optional(Type.Unknown()),
      id: Type.Optional(Type.String()),
      from: Type.Optional(Type.Unknown()),
      to: Type.Optional(Type.Unknown()),
      cursor: Type.Optional(Type.String({ maxLength: 1_000 })),
    },
    { additionalProperties: false, message: DRY_RUN_SHAPE },
  ),
);

const badCursor = (problem: string) =>
  new ApiError({ code: 'INVALID_REQUEST', message: `cursor ${problem}`, details: [{ field: 'cursor', message: problem }] });

/** A dry run's `from` or `to`: a time as everywhere (util/time-text.ts), else `fallback` when absent. */
const parseTime = (value: unknown, field: string, fallback: number): number => (value === undefined ? fallback : requestTime(readTime(value), field));

/**
 * Custom threat models (Pro and Business): CRUD with versions, Sigma import, dry run, and the
 * account's Sigma field mapping. Every read and write is scoped to the key's account.
 */
export function registerThreatModelRoutes(app: FastifyInstance, deps: ThreatModelRouteDeps): void {
  // Sigma rules arrive as YAML on these routes only; everywhere else YAML stays 415.
  app.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (request, body, done) => {
    if (!request.url.startsWith(BASE)) {
      const error = new Error('Unsupported media type') as Error & { code: string; statusCode: number };
      error.code = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';
      error.statusCode = 415;
      done(error, undefined);
      return;
    }
    done(null, body);
  });

  const route = (summary: string) => ({ summary, tags: ['threat models'], security: KeyAuth, response: { ...ErrorResponses } });
  const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
  const ModelBody = Type.Unknown({ description: 'A native threat model, {"format": "sigma", "rule": ...}, or a Sigma rule as application/yaml.' });

  async function load(ctx: AccountContext, id: string): Promise<ThreatModelRow> {
    const row = await deps.store.threatModels.getThreatModel(ctx.account.id, id);
    if (!row) throw new ApiError({ code: 'NOT_FOUND', message: `No threat model ${id}.` });
    return row;
  }

  /** Refuses a change past the account's per-minute budget of changes. */
  async function changeAllowed(ctx: AccountContext, reply: FastifyReply): Promise<void> {
    const decision = await deps.limiter.hitIp(`threat-model changes ${ctx.account.id}`, deps.changesPerMinute, deps.clock.now());
    if (decision.allowed) return;
    reply.header('Retry-After', String(decision.retryAfter));
    throw new ApiError({
      code: 'RATE_LIMITED',
      message: `An account changes its threat models at most ${deps.changesPerMinute} times a minute. Retry in ${decision.retryAfter} second${decision.retryAfter === 1 ? '' : 's'}.`,
      retryAfter: decision.retryAfter,
    });
  }

  const checker = new ModelChecker();
  app.addHook('onClose', () => checker.close());

  /** The model a check answered, or the refusal: the input is tenant text, read on the checker's thread. */
  function accept(outcome: CheckOutcome, reply: FastifyReply): CheckedModel {
    if (!outcome.ran) {
      reply.header('Retry-After', '1');
      throw new ApiError({
        code: 'THREAT_MODEL_BUSY',
        message: 'A threat model of this account is being checked; retry when it has been answered.',
        retryAfter: 1,
      });
    }
    if (!outcome.result.ok) throw invalid(outcome.result.errors);
    return outcome.result.value;
  }

  /**
   * Saves a new version over the current one (a concurrent change is re-read and the change
   * applied again) and records it in the audit trail.
   */
  async function saveVersion(
    request: FastifyRequest,
    ctx: AccountContext,
    id: string,
    next: (current: ThreatModelRow) => CheckedModel | Promise<CheckedModel>,
  ): Promise<ThreatModelRow> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await load(ctx, id);
      const rows = await deps.store.threatModels.listThreatModels(ctx.account.id);
      const unique = withUniqueAlertType(rows, await next(current), id);
      if (!unique.ok) throw invalid([unique.error]);
      const value = unique.value;
      const problem = accountMemoryProblem(rows, value, id);
      if (problem !== undefined) throw invalid([problem]);
      const saved = await deps.store.threatModels.updateThreatModel(ctx.account.id, id, current.version, {
        enabled: value.definition.enabled,
        ...toStored(value.definition, value.source),
        at: deps.clock.now(),
      });
      if (saved) {
        await deps.registry.changed(ctx.account.id);
        await deps.audit.record(auditOrigin(request), {
          ...versionChange(current, saved),
          target: { kind: 'threat_model', id },
          details: { version: saved.version },
        });
        return saved;
      }
    }
    throw new ApiError({ code: 'UNAVAILABLE', message: 'The model kept changing while it was saved; retry.', retryAfter: 1 });
  }

  app.get(BASE, { config: { access: 'read' }, schema: { ...route('List the account’s threat models'), querystring: NoFilters } }, async (request) => {
    const ctx = contextOf(request);
    const rows = await deps.store.threatModels.listThreatModels(ctx.account.id);
    return { data: rows.map(modelView), limits: Object.assign({}, LIMITS, { changesPerMinute: deps.changesPerMinute }) };
  });

  app.post(BASE, {
    config: { access: 'manage' },
    validatorCompiler: noValidation,
    schema: { ...route('Create a threat model (native or Sigma)'), body: ModelBody },
    handler: async (request, reply) => {
      const ctx = contextOf(request);
      await changeAllowed(ctx, reply);
      const value = accept(await checker.input(ctx.account.id, request.body, fieldsOf(ctx)), reply);
      const existing = await deps.store.threatModels.listThreatModels(ctx.account.id);
      if (existing.length >= LIMITS.modelsPerAccount)
        throw invalid([{ field: '(account)', message: `an account has at most ${LIMITS.modelsPerAccount} threat models; delete one first` }]);
      const problem = accountMemoryProblem(existing, value);
      if (problem !== undefined) throw invalid([problem]);
      const unique = withUniqueAlertType(existing, value);
      if (!unique.ok) throw invalid([unique.error]);
      const now = deps.clock.now();
      const row = await deps.store.threatModels.createThreatModel({
        id: `tm_${ulid(now)}`,
        accountId: ctx.account.id,
        enabled: unique.value.definition.enabled,
        ...toStored(unique.value.definition, unique.value.source),
        createdAt: now,
      });
      await deps.registry.changed(ctx.account.id);
      await deps.audit.record(auditOrigin(request), {
        action: 'threat_model.created',
        target: { kind: 'threat_model', id: row.id },
        changes: changesBetween(undefined, auditedFields(row)),
        details: { version: row.version },
      });
      reply.code(201);
      return modelView(row);
    },
  });

  const dryRuns = new DryRunner(deps.store.events, deps.clock, deps.dryRunLimits, deps.dryRunStates);
  app.addHook('onClose', () => dryRuns.close());
  const DryRunAnswer = Type.Object({
    range: Type.Object({ from: Type.String(), to: Type.String() }),
    scanned: Type.Integer({ description: 'Events this page evaluated, oldest first: every event left in the range unless truncated' }),
    matched: Type.Integer(),
    alerts_raised: Type.Integer(),
    truncated: Type.Union([Type.Literal('rows'), Type.Literal('time'), Type.Null()], {
      description:
        'null when every event of the range was evaluated; "rows" when the range holds more events than a dry run reads; "time" when reading and evaluation ran out of time',
    }),
    truncated_reason: Type.Union([Type.String(), Type.Null()], { description: 'What the bound cut short, in words; null when truncated is null' }),
    events: Type.Array(
      Type.Object({
        id: Type.String(),
        event: Type.String(),
        timestamp: Type.String(),
        actor_id: Type.Union([Type.String(), Type.Null()]),
        ip: Type.Union([Type.String(), Type.Null()]),
      }),
      { description: 'The first matched events, oldest first' },
    ),
    alerts: Type.Array(
      Type.Object({
        type: Type.String(),
        severity: Type.String(),
        subject: Type.String(),
        count: Type.Integer(),
        first_seen: Type.String(),
        last_seen: Type.String(),
        event_ids: Type.Array(Type.String()),
      }),
      { description: 'The first alerts this page would have raised or added to (alerts_raised counts those it opened)' },
    ),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Send it back (with the same model) for the next page; null when the run is over. A cursor serves one page, for 10 minutes.',
    }),
    progress: Type.Object(
      { evaluated: Type.Integer(), total: Type.Integer(), matched: Type.Integer(), alerts_raised: Type.Integer() },
      { description: 'The run so far, this page included; total: the events of the range counted when the run started' },
    ),
  });

  app.post(`${BASE}/test`, {
    config: { access: 'triage' },
    validatorCompiler: noValidation,
    schema: {
      ...route('Dry run: which stored events a model would have matched and which alerts it would have raised (no side effects)'),
      body: Type.Unknown({
        description:
          '{"model": <model or Sigma>} or {"id": "tm_…"}, with optional "from" and "to" (ISO 8601 or Unix milliseconds; default the last 24 hours), and "cursor": the next_cursor of the previous page.',
      }),
      response: { 200: DryRunAnswer, ...ErrorResponses },
    },
    handler: async (request, reply) => {
      const ctx = contextOf(request);
      const checked = checkDryRun(request.body);
      if (!checked.ok) throw new ApiError({ code: 'INVALID_REQUEST', message: (checked.errors[0] as ErrorDetail).message, details: checked.errors });
      const body = checked.value;
      if ((body.model === undefined) === (body.id === undefined)) throw new ApiError({ code: 'INVALID_REQUEST', message: DRY_RUN_SHAPE });
      const cursor = body.cursor === undefined ? undefined : readDryRunCursor(body.cursor);
      if (body.cursor !== undefined && (cursor === undefined || cursor.account !== ctx.account.id))
        throw badCursor('is not the next_cursor of a dry run of this account');
      const now = deps.clock.now();
      // A later page walks the range its run started with.
      const to = cursor?.to ?? parseTime(body.to, 'to', now);
      const from = cursor?.from ?? parseTime(body.from, 'from', to - DAY_MS);
      if (
        cursor !== undefined &&
        ((body.to !== undefined && parseTime(body.to, 'to', now) !== to) || (body.from !== undefined && parseTime(body.from, 'from', now) !== from))
      )
        throw badCursor('is of a dry run over another range: send the range of its first page, or none');
      if (from >= to || to - from > MAX_RANGE_MS)
        throw new ApiError({ code: 'INVALID_REQUEST', message: 'the range must have from before to and span at most 31 days' });
      // Compiled on the dry run's thread: compiling large patterns would take the request thread's time too.
      let model: DryRunModel;
      if (body.id !== undefined) {
        const row = await load(ctx, body.id);
        model = { id: row.id, version: row.version, definition: storedDefinition(row) };
      } else {
        const value = accept(await checker.input(ctx.account.id, body.model, fieldsOf(ctx)), reply);
        model = { id: 'dry_run', version: 0, definition: value.definition };
      }
      if (cursor !== undefined && cursor.model !== modelKeyOf(model)) throw badCursor('is of a dry run of another model: send the model of its first page');
      const outcome = await dryRuns.run(ctx.account.id, model, { from, to }, cursor?.at);
      if (!outcome.ok && 'spent' in outcome)
        throw badCursor('was used already or is older than 10 minutes (a cursor serves one page): start the dry run again from the last page’s range');
      if (!outcome.ok) {
        reply.header('Retry-After', String(outcome.retryAfter));
        throw new ApiError({
          code: 'DRY_RUN_BUSY',
          message: 'Another dry run of this account, or too many of all accounts, is running; retry when it has ended.',
          retryAfter: outcome.retryAfter,
        });
      }
      const { next, ...result } = outcome.result;
      const following: DryRunCursor | null = next === null ? null : { account: ctx.account.id, model: modelKeyOf(model), from, to, at: next };
      return {
        range: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
        ...result,
        next_cursor: following === null ? null : writeDryRunCursor(following),
      };
    },
  });

  app.get(
    `${BASE}/sigma-fields`,
    { config: { access: 'read' }, schema: route('The Sigma field mapping: defaults and this account’s overrides') },
    async (request) => {
      const ctx = contextOf(request);
      return { defaults: DEFAULT_SIGMA_FIELDS, overrides: fieldsOf(ctx), unmapped: 'metadata.<field>' };
    },
  );

  app.put(`${BASE}/sigma-fields`, {
    config: { access: 'manage' },
    validatorCompiler: noValidation,
    schema: { ...route('Replace this account’s Sigma field overrides'), body: Type.Object({ fields: Type.Record(Type.String(), Type.String()) }) },
    handler: async (request) => {
      const ctx = contextOf(request);
      const body = request.body as { fields?: unknown } | null;
      const checked = validateFieldMapping(body?.fields);
      if (!checked.ok) throw new ApiError({ code: 'INVALID_REQUEST', message: checked.errors[0]?.message ?? 'invalid mapping', details: checked.errors });
      const account = await deps.store.accounts.getAccount(ctx.account.id);
      if (!account) throw new ApiError({ code: 'UNAUTHORIZED', message: 'Missing API key.' });
      const next = { ...account.settings, [SIGMA_FIELDS_SETTING]: checked.value };
      await deps.store.accounts.updateAccount(account.id, { settings: next });
      deps.settingsChanged();
      const changes = changesBetween(account.settings, next, [SIGMA_FIELDS_SETTING]);
      if (Object.keys(changes).length > 0) await deps.audit.record(auditOrigin(request), { action: 'settings.changed', changes });
      return { defaults: DEFAULT_SIGMA_FIELDS, overrides: checked.value, unmapped: 'metadata.<field>' };
    },
  });

  app.get<{ Params: { id: string } }>(
    `${BASE}/:id`,
    { config: { access: 'read' }, schema: { ...route('One threat model'), params: IdParams } },
    async (request) => modelView(await load(contextOf(request), request.params.id)),
  );

  app.get<{ Params: { id: string } }>(
    `${BASE}/:id/versions`,
    { config: { access: 'read' }, schema: { ...route('Every saved version of a threat model, newest first'), params: IdParams } },
    async (request) => {
      const ctx = contextOf(request);
      await load(ctx, request.params.id);
      const rows = await deps.store.threatModels.listThreatModelVersions(ctx.account.id, request.params.id);
      return { data: rows.map(versionView) };
    },
  );

  app.put<{ Params: { id: string } }>(`${BASE}/:id`, {
    config: { access: 'manage' },
    validatorCompiler: noValidation,
    schema: { ...route('Replace a threat model (a new version)'), params: IdParams, body: ModelBody },
    handler: async (request, reply) => {
      const ctx = contextOf(request);
      await changeAllowed(ctx, reply);
      const value = accept(await checker.input(ctx.account.id, request.body, fieldsOf(ctx)), reply);
      return modelView(await saveVersion(request, ctx, request.params.id, () => value));
    },
  });

  app.patch<{ Params: { id: string } }>(`${BASE}/:id`, {
    config: { access: 'manage' },
    validatorCompiler: noValidation,
    schema: { ...route('Change parts of a threat model (a new version); null removes threshold, sequence or description'), params: IdParams, body: ModelBody },
    handler: async (request, reply) => {
      const ctx = contextOf(request);
      const patch = request.body;
      if (patch === null || typeof patch !== 'object' || Array.isArray(patch))
        throw invalid([{ field: '(body)', message: 'a PATCH body is an object of model fields; send a Sigma rule with PUT' }]);
      if ('format' in patch) throw invalid([{ field: 'format', message: 'replace the rule with PUT to change its format or its Sigma text' }]);
      await changeAllowed(ctx, reply);
      const saved = await saveVersion(request, ctx, request.params.id, async (current) => {
        const merged: Record<string, unknown> = { ...(current.definition as Record<string, unknown>) };
        for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
          if (v === null) delete merged[k];
          else merged[k] = v;
        }
        const checked = accept(await checker.native(ctx.account.id, merged), reply);
        // A Sigma model stays one while only its name, state, description or outcome change.
        const keepsSource = Object.keys(patch).every((k) => ['enabled', 'name', 'description', 'outcome'].includes(k));
        const source = keepsSource ? storedSource(current) : ({ format: 'native' } as const);
        return { definition: checked.definition, source, memoryBytes: checked.memoryBytes };
      });
      return modelView(saved);
    },
  });

  app.delete<{ Params: { id: string } }>(
    `${BASE}/:id`,
    { config: { access: 'manage' }, schema: { ...route('Delete a threat model and its versions'), params: IdParams } },
    async (request, reply) => {
      const ctx = contextOf(request);
      await changeAllowed(ctx, reply);
      const row = await load(ctx, request.params.id);
      const deleted = await deps.store.threatModels.deleteThreatModel(ctx.account.id, row.id);
      if (!deleted) throw new ApiError({ code: 'NOT_FOUND', message: `No threat model ${row.id}.` });
      await deps.registry.changed(ctx.account.id);
      await deps.audit.record(auditOrigin(request), {
        action: 'threat_model.deleted',
        target: { kind: 'threat_model', id: row.id },
        changes: changesBetween(auditedFields(row), undefined, ['name', 'enabled']),
        details: { version: row.version },
      });
      reply.code(204);
      return null;
    },
  );
}
