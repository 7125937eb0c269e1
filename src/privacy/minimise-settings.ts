/**
 * The account's minimisation settings, the `privacy` part of GET/PATCH /v1/settings: what the
 * minimise stage keeps of each identifier, whether the user agent is kept after enrichment, and
 * which metadata is scrubbed. Validated here (TypeBox through util/schema-check.ts) and compiled
 * once per settings object: tenant key names are globs and tenant value patterns RE2 regular
 * expressions (util/tenant-pattern.ts), each bounded in size and in number.
 */
import { Type, type Static } from '@sinclair/typebox';
import { schemaCheck, type Problem } from '../util/schema-check.js';
import { compileGlob, compileTenantRegex, type TenantGlob, type TenantRegex } from '../util/tenant-pattern.js';

export const IP_MODES = ['keep', 'truncate', 'pseudonym'] as const;
export const ID_MODES = ['keep', 'pseudonym'] as const;
export type IpMode = (typeof IP_MODES)[number];
export type IdMode = (typeof ID_MODES)[number];

/** How many tenant keys and patterns an account may have, and their total regular-expression size. */
export const SCRUB_LIMITS = Object.freeze({
  keys: 64,
  patterns: 16,
  /** RE2 instructions of all patterns together: a metadata text costs at most this much per character. */
  patternInstructions: 8_000,
});

const Literal = <T extends string>(values: readonly T[], field: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { message: `${field} must be one of ${values.map((v) => `"${v}"`).join(', ')}` },
  );

const PrivacySchema = Type.Object(
  {
    ip: Type.Optional(Literal(IP_MODES, 'privacy.ip')),
    actor_id: Type.Optional(Literal(ID_MODES, 'privacy.actor_id')),
    email: Type.Optional(Literal(ID_MODES, 'privacy.email')),
    device_id: Type.Optional(Literal(ID_MODES, 'privacy.device_id')),
    user_agent: Type.Optional(Literal(['keep', 'drop'] as const, 'privacy.user_agent')),
    scrub: Type.Optional(
      Type.Object(
        {
          builtin: Type.Optional(Type.Boolean()),
          keys: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: SCRUB_LIMITS.keys })),
          patterns: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: SCRUB_LIMITS.patterns })),
        },
        { additionalProperties: false, unknownMessage: 'privacy.scrub has the members builtin, keys and patterns' },
      ),
    ),
  },
  {
    additionalProperties: false,
    unknownMessage: 'privacy has the members ip, actor_id, email, device_id, user_agent and scrub',
    message: 'privacy must be an object, e.g. {"ip": "truncate", "email": "pseudonym"}',
  },
);

/** The `privacy` part as stored and as PATCH takes it (members left out keep their default). */
export type PrivacyInput = Static<typeof PrivacySchema>;

/** Every member resolved. */
export interface PrivacySettings {
  readonly ip: IpMode;
  readonly actor_id: IdMode;
  readonly email: IdMode;
  readonly device_id: IdMode;
  readonly user_agent: 'keep' | 'drop';
  readonly scrub: { readonly builtin: boolean; readonly keys: readonly string[]; readonly patterns: readonly string[] };
}

/** Everything kept as sent: what an account has until it chooses otherwise. */
export const DEFAULT_PRIVACY: PrivacySettings = Object.freeze({
  ip: 'keep',
  actor_id: 'keep',
  email: 'keep',
  device_id: 'keep',
  user_agent: 'keep',
  scrub: Object.freeze({ builtin: false, keys: Object.freeze([]), patterns: Object.freeze([]) }),
});

const checkPrivacy = schemaCheck(PrivacySchema, 'privacy');

export const resolvePrivacy = (input: PrivacyInput): PrivacySettings => ({
  ip: input.ip ?? DEFAULT_PRIVACY.ip,
  actor_id: input.actor_id ?? DEFAULT_PRIVACY.actor_id,
  email: input.email ?? DEFAULT_PRIVACY.email,
  device_id: input.device_id ?? DEFAULT_PRIVACY.device_id,
  user_agent: input.user_agent ?? DEFAULT_PRIVACY.user_agent,
  scrub: {
    builtin: input.scrub?.builtin ?? DEFAULT_PRIVACY.scrub.builtin,
    keys: input.scrub?.keys ?? DEFAULT_PRIVACY.scrub.keys,
    patterns: input.scrub?.patterns ?? DEFAULT_PRIVACY.scrub.patterns,
  },
});

/** The settings with their tenant patterns compiled: what the minimise stage runs. */
export interface CompiledPrivacy {
  readonly settings: PrivacySettings;
  /** False when every member keeps the event as sent: the stage does nothing. */
  readonly active: boolean;
  readonly keys: readonly TenantGlob[];
  readonly patterns: readonly TenantRegex[];
}

export type PrivacyResult =
  { readonly ok: true; readonly value: PrivacyInput; readonly compiled: CompiledPrivacy } | { readonly ok: false; readonly errors: readonly Problem[] };

function compile(settings: PrivacySettings): { ok: true; compiled: CompiledPrivacy } | { ok: false; errors: Problem[] } {
  const errors: Problem[] = [];
  const keys: TenantGlob[] = [];
  settings.scrub.keys.forEach((key, i) => {
    const glob = compileGlob(key, { ignoreCase: true });
    if (glob.ok) keys.push(glob.pattern);
    else errors.push({ field: `privacy.scrub.keys.${i}`, message: `privacy.scrub.keys.${i}: ${glob.message}` });
  });
  const patterns: TenantRegex[] = [];
  let instructions = 0;
  settings.scrub.patterns.forEach((text, i) => {
    const regex = compileTenantRegex(text);
    if (!regex.ok) {
      errors.push({ field: `privacy.scrub.patterns.${i}`, message: `privacy.scrub.patterns.${i}: ${regex.message}` });
      return;
    }
    instructions += regex.pattern.instructions;
    patterns.push(regex.pattern);
  });
  if (instructions > SCRUB_LIMITS.patternInstructions)
    errors.push({
      field: 'privacy.scrub.patterns',
      message: `privacy.scrub.patterns compile to ${instructions} RE2 instructions together, over the limit of ${SCRUB_LIMITS.patternInstructions}`,
    });
  if (errors.length > 0) return { ok: false, errors };
  const s = settings;
  const active =
    s.ip !== 'keep' ||
    s.actor_id !== 'keep' ||
    s.email !== 'keep' ||
    s.device_id !== 'keep' ||
    s.user_agent !== 'keep' ||
    s.scrub.builtin ||
    keys.length > 0 ||
    patterns.length > 0;
  return { ok: true, compiled: { settings, active, keys, patterns } };
}

/**
 * Validates the `privacy` part: its shape, every tenant pattern, and the pseudonym modes only
 * when the instance has a master secret to make pseudonyms with. Every problem names its field.
 */
export function validatePrivacySettings(value: unknown, pseudonymsAvailable: boolean): PrivacyResult {
  const checked = checkPrivacy(value);
  if (!checked.ok) return checked;
  const settings = resolvePrivacy(checked.value);
  const errors: Problem[] = [];
  if (!pseudonymsAvailable) {
    for (const field of ['ip', 'actor_id', 'email', 'device_id'] as const)
      if (settings[field] === 'pseudonym')
        errors.push({
          field: `privacy.${field}`,
          message: `privacy.${field} cannot be "pseudonym": this instance has no pseudonym secret (the operator sets VIGIL_PSEUDONYM_SECRET)`,
        });
  }
  const compiled = compile(settings);
  if (!compiled.ok) errors.push(...compiled.errors);
  if (errors.length > 0 || !compiled.ok) return { ok: false, errors };
  return { ok: true, value: checked.value, compiled: compiled.compiled };
}

const NOTHING: CompiledPrivacy = Object.freeze({ settings: DEFAULT_PRIVACY, active: false, keys: [], patterns: [] });
const cache = new WeakMap<object, CompiledPrivacy>();

/**
 * The compiled settings of an account, from `account.settings.privacy`; memoised per settings
 * object (accounts are re-read when their settings change). Settings that no longer validate
 * (a rule changed since they were saved) keep what they can: an unreadable part keeps nothing
 * less than its defaults, so the stage never stops ingestion.
 */
export function privacyOf(accountSettings: Readonly<Record<string, unknown>>): CompiledPrivacy {
  const part = accountSettings.privacy;
  if (part === undefined || part === null || typeof part !== 'object') return NOTHING;
  const hit = cache.get(part);
  if (hit !== undefined) return hit;
  const checked = checkPrivacy(part);
  let compiled = NOTHING;
  if (checked.ok) {
    const result = compile(resolvePrivacy(checked.value));
    if (result.ok) compiled = result.compiled;
  }
  cache.set(part, compiled);
  return compiled;
}
