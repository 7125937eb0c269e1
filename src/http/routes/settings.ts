import { requestAccount } from '../context.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DETECTOR_SPECS } from '../../detection/specs.js';
import { validateDetectionSettings } from '../../detection/settings.js';
import { DEFAULT_THRESHOLDS, thresholdsOf, validateRiskSettings } from '../../scoring/thresholds.js';
import type { Store } from '../../storage/store.js';
import type { Account, Plan } from '../../event/account.js';
import { retentionDaysOf, validateRetentionSettings } from '../../ops/retention.js';
import { ApiError } from '../errors.js';
import { type ErrorDetail } from '../../event/rejection.js';
import { ErrorResponses, KeyAuth, noValidation } from '../schemas.js';
import { changesBetween, type AuditTrail } from '../../audit/trail.js';
import { auditOrigin } from '../audit-origin.js';
import { refusal } from '../guards.js';
import { DEFAULT_PRIVACY, ID_MODES, IP_MODES, privacyOf, validatePrivacySettings } from '../../privacy/minimise-settings.js';

export interface SettingsRouteDeps {
  readonly store: Store;
  /** Called after settings change (the key cache holds the account). */
  readonly changed: () => void;
  readonly audit: AuditTrail;
  /** The instance has a pseudonym master secret: the `pseudonym` privacy modes may be chosen. */
  readonly pseudonymsAvailable: boolean;
}

const PARTS = ['risk', 'detectors', 'allowlists', 'privacy', 'retention'] as const;
/** Parts only a person of role admin or above (or a key with the manage scope) may change: they decide what is stored about people. */
const GUARDED_PARTS: readonly Part[] = ['privacy', 'retention'];
type Part = (typeof PARTS)[number];

const SettingsBody = Type.Object(
  {
    risk: Type.Optional(Type.Union([Type.Null(), Type.Object({ challenge: Type.Optional(Type.Integer()), block: Type.Optional(Type.Integer()) })])),
    detectors: Type.Optional(Type.Union([Type.Null(), Type.Record(Type.String(), Type.Record(Type.String(), Type.Union([Type.Number(), Type.Boolean()])))])),
    allowlists: Type.Optional(Type.Union([Type.Null(), Type.Record(Type.String(), Type.Array(Type.Unknown()))])),
    retention: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.Object({ events_days: Type.Optional(Type.Integer()), alerts_days: Type.Optional(Type.Integer()), audit_days: Type.Optional(Type.Integer()) }),
      ]),
    ),
    privacy: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.Object({
          ip: Type.Optional(Type.Union(IP_MODES.map((m) => Type.Literal(m)))),
          actor_id: Type.Optional(Type.Union(ID_MODES.map((m) => Type.Literal(m)))),
          email: Type.Optional(Type.Union(ID_MODES.map((m) => Type.Literal(m)))),
          device_id: Type.Optional(Type.Union(ID_MODES.map((m) => Type.Literal(m)))),
          user_agent: Type.Optional(Type.Union([Type.Literal('keep'), Type.Literal('drop')])),
          scrub: Type.Optional(
            Type.Object({
              builtin: Type.Optional(Type.Boolean()),
              keys: Type.Optional(Type.Array(Type.String())),
              patterns: Type.Optional(Type.Array(Type.String())),
            }),
          ),
        }),
      ]),
    ),
  },
  { description: 'Each part given replaces that part; null resets it to the defaults.' },
);

function view(account: Account, plan: Plan, pseudonymsAvailable: boolean) {
  const settings = account.settings;
  const planDays = plan.capabilities.retentionDays;
  return {
    risk: settings.risk ?? {},
    detectors: settings.detectors ?? {},
    allowlists: settings.allowlists ?? {},
    privacy: settings.privacy ?? {},
    retention: settings.retention ?? {},
    effective: {
      retention: retentionDaysOf(account, planDays),
      risk: thresholdsOf(settings, DEFAULT_THRESHOLDS),
      privacy: privacyOf(settings).settings,
      pseudonyms_available: pseudonymsAvailable,
    },
    defaults: {
      risk: DEFAULT_THRESHOLDS,
      privacy: DEFAULT_PRIVACY,
      retention: { events: planDays, alerts: planDays, audit: planDays },
      retention_max_days: planDays,
      detectors: Object.fromEntries(DETECTOR_SPECS.map((d) => [d.name, Object.fromEntries((d.thresholds ?? []).map((t) => [t.name, t.default]))])),
    },
  };
}

/** Validates a PATCH body: every problem, each with its field path. */
function validatePatch(
  body: unknown,
  deps: SettingsRouteDeps,
  plan: Plan,
): { ok: true; value: Partial<Record<Part, unknown>> } | { ok: false; errors: ErrorDetail[] } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { ok: false, errors: [{ field: '(body)', message: 'settings must be a JSON object' }] };
  const input = body as Record<string, unknown>;
  const errors: ErrorDetail[] = [];
  for (const key of Object.keys(input)) {
    if (!(PARTS as readonly string[]).includes(key)) errors.push({ field: key, message: `unknown settings part "${key}"; parts: ${PARTS.join(', ')}` });
  }
  const value: Partial<Record<Part, unknown>> = {};
  if (input.risk !== undefined) {
    if (input.risk === null) value.risk = null;
    else {
      const risk = validateRiskSettings(input.risk);
      if (risk.ok) value.risk = risk.value;
      else errors.push(...risk.errors);
    }
  }
  if (input.retention !== undefined) {
    if (input.retention === null) value.retention = null;
    else {
      const retention = validateRetentionSettings(input.retention, plan);
      if (retention.ok) value.retention = retention.value;
      else errors.push(...retention.errors);
    }
  }
  if (input.privacy !== undefined) {
    if (input.privacy === null) value.privacy = null;
    else {
      const privacy = validatePrivacySettings(input.privacy, deps.pseudonymsAvailable);
      if (privacy.ok) value.privacy = privacy.value;
      else errors.push(...privacy.errors);
    }
  }
  const detection = validateDetectionSettings({
    detectors: input.detectors === null ? undefined : input.detectors,
    allowlists: input.allowlists === null ? undefined : input.allowlists,
  });
  if (!detection.ok) for (const message of detection.errors) errors.push({ field: /^[\w.[\]-]+/.exec(message)?.[0] ?? 'settings', message });
  else {
    if (input.detectors !== undefined) value.detectors = input.detectors === null ? null : detection.value.detectors;
    if (input.allowlists !== undefined) value.allowlists = input.allowlists === null ? null : detection.value.allowlists;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}

/** GET/PATCH /v1/settings: detector thresholds, risk action thresholds and allowlists. */
export function registerSettingsRoutes(app: FastifyInstance, deps: SettingsRouteDeps): void {
  const schema = (summary: string) => ({ summary, tags: ['settings'], security: KeyAuth, response: { ...ErrorResponses } });
  const accountOf = async (request: FastifyRequest) => {
    const account = await deps.store.accounts.getAccount(requestAccount(request).account.id);
    if (!account) throw new ApiError({ code: 'UNAUTHORIZED', message: 'Missing API key.' });
    return account;
  };

  app.get('/v1/settings', { config: { access: 'read' }, schema: schema('The account settings, effective values and defaults') }, async (request) =>
    view(await accountOf(request), requestAccount(request).plan, deps.pseudonymsAvailable),
  );

  app.patch('/v1/settings', {
    config: { access: 'triage' },
    validatorCompiler: noValidation,
    schema: { ...schema('Change settings; each part given replaces that part, null resets it'), body: SettingsBody },
    handler: async (request) => {
      const account = await accountOf(request);
      const { plan } = requestAccount(request);
      const patch = validatePatch(request.body, deps, plan);
      const body = request.body;
      const guarded = GUARDED_PARTS.find((part) => body !== null && typeof body === 'object' && Object.hasOwn(body, part));
      const refused = guarded === undefined ? undefined : refusal(requestAccount(request).principal, 'manage');
      if (refused !== undefined) throw new ApiError({ code: 'FORBIDDEN', message: `Changing ${guarded} settings: ${refused}` });
      if (!patch.ok) throw new ApiError({ code: 'INVALID_REQUEST', message: patch.errors[0]?.message ?? 'invalid settings', details: patch.errors });
      const next: Record<string, unknown> = { ...account.settings };
      for (const [part, value] of Object.entries(patch.value)) {
        if (value === null) delete next[part];
        else next[part] = value;
      }
      const updated = await deps.store.accounts.updateAccount(account.id, { settings: next });
      deps.changed();
      const changes = changesBetween(account.settings, next, PARTS);
      if (Object.keys(changes).length > 0) await deps.audit.record(auditOrigin(request), { action: 'settings.changed', changes });
      return view(updated ?? account, plan, deps.pseudonymsAvailable);
    },
  });
}
