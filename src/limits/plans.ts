import { readFileSync } from 'node:fs';
import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import type { Plan, PlanCapabilities } from '../event/account.js';
import { errorCode, errorMessage } from '../util/caught.js';
import { fieldOfPointer, mismatchMessage, unknownMemberMessage } from '../util/schema-text.js';

declare module '../event/account.js' {
  interface PlanCapabilities {
    /** Custom threat models: the `/v1/threat-models` routes, their evaluation at ingestion, and the dashboard's `pro` flag. */
    readonly threatModels: boolean;
    /** Days of event history the retention pass keeps. */
    readonly retentionDays: number;
  }
}

/**
 * The four built-in plans: limits, prices, overage rules and capabilities. The plans file
 * (VIGIL_PLANS_FILE) overrides any field of these and adds plans.
 */
export const DEFAULT_PLANS: Readonly<Record<'free' | 'starter' | 'pro' | 'business', Plan>> = Object.freeze({
  free: {
    name: 'free',
    rpm: 30,
    eps: 5,
    batchMax: 0,
    monthlyCap: 2_500,
    overage: 'drop',
    priceUsdMonth: 0,
    overageUsdPer1000: null,
    capabilities: { threatModels: false, retentionDays: 7 },
  },
  starter: {
    name: 'starter',
    rpm: 500,
    eps: 25,
    batchMax: 50,
    monthlyCap: 25_000,
    overage: 'bill',
    priceUsdMonth: 12,
    overageUsdPer1000: 0.4,
    capabilities: { threatModels: false, retentionDays: 30 },
  },
  pro: {
    name: 'pro',
    rpm: 1_000,
    eps: 100,
    batchMax: 100,
    monthlyCap: 100_000,
    overage: 'bill',
    priceUsdMonth: 0,
    overageUsdPer1000: null,
    capabilities: { threatModels: true, retentionDays: 90 },
  },
  business: {
    name: 'business',
    rpm: 2_000,
    eps: 1_000,
    batchMax: 100,
    monthlyCap: 500_000,
    overage: 'bill',
    priceUsdMonth: 0,
    overageUsdPer1000: null,
    capabilities: { threatModels: true, retentionDays: 365 },
  },
});

/**
 * The entry plan: the first account's unless VIGIL_INITIAL_PLAN names another, and the plan of an
 * account whose plan the table no longer has.
 */
export const ENTRY_PLAN = 'free';

export type PlanTable = Readonly<Record<string, Plan>>;

/**
 * The plan of that name, or undefined. Names come from requests, the database and the
 * environment: only the table's own entries count, never what every object inherits
 * (`constructor`, `__proto__`, `toString`, `valueOf`).
 */
export function planNamed(table: PlanTable, name: string): Plan | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** An account's plan: the plan of that name, or the entry plan when the plans file no longer has it. */
export function planOf(table: PlanTable, name: string): Plan {
  return planNamed(table, name) ?? planNamed(table, ENTRY_PLAN) ?? DEFAULT_PLANS[ENTRY_PLAN];
}

export class PlanFileError extends Error {}

/** A field of a plan in the plans file. */
interface Field<T> {
  /** Its name in the plans file. */
  readonly field: string;
  /** What it accepts; a problem's message is worded from it. */
  readonly schema: TSchema & { readonly static: T };
}

/** A limit or price: a plan added by the plans file must state it, unless it has `whenNew`. */
interface Limit<T> extends Field<T> {
  readonly whenNew?: T;
}

/** A capability: a plan added by the plans file without the field gets `least`, the least it offers. */
interface Capability<T> extends Field<T> {
  readonly least: T;
}

type Limits = Omit<Plan, 'name' | 'capabilities'>;

const LIMITS: { readonly [K in keyof Limits]-?: Limit<Limits[K]> } = {
  rpm: { field: 'rpm', schema: Type.Integer({ minimum: 1 }) },
  eps: { field: 'eps', schema: Type.Integer({ minimum: 1 }) },
  batchMax: { field: 'batch_max', schema: Type.Integer({ minimum: 0 }) },
  monthlyCap: { field: 'monthly_cap', schema: Type.Integer({ minimum: 0 }) },
  overage: { field: 'overage', schema: Type.Union([Type.Literal('drop'), Type.Literal('bill')]), whenNew: 'bill' },
  priceUsdMonth: { field: 'price_usd_month', schema: Type.Number({ minimum: 0 }), whenNew: 0 },
  overageUsdPer1000: { field: 'overage_usd_per_1000', schema: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]), whenNew: null },
};

/** A century: a longer retention keeps every event anyway, and the pass's cut-off stays a date every backend reads. */
const MAX_RETENTION_DAYS = 36_500;

const CAPABILITIES: { readonly [K in keyof PlanCapabilities]-?: Capability<PlanCapabilities[K]> } = {
  threatModels: { field: 'threat_models', schema: Type.Boolean(), least: false },
  // The least retention is the Free plan's.
  retentionDays: {
    field: 'retention_days',
    schema: Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS }),
    least: DEFAULT_PLANS.free.capabilities.retentionDays,
  },
};

const FIELDS: readonly Field<unknown>[] = [...Object.values(LIMITS), ...Object.values(CAPABILITIES)];

const PlanFile = TypeCompiler.Compile(Type.Object({ plans: Type.Record(Type.String(), Type.Unknown()) }));
const PlanName = TypeCompiler.Compile(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }));
const PLAN_ENTRY = Type.Object(Object.fromEntries(FIELDS.map((f) => [f.field, Type.Optional(f.schema)])), { additionalProperties: false });
const PlanEntry = TypeCompiler.Compile(PLAN_ENTRY);

/** The first problem of a plan's entry in the plans file, naming the plan and the field; undefined when it has none. */
function entryProblem(name: string, entry: unknown): string | undefined {
  const error = PlanEntry.Errors(entry).First();
  if (error === undefined) return undefined;
  if (error.path === '') return `plan "${name}" must be an object`;
  const field = fieldOfPointer(error.path);
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return unknownMemberMessage(`plans.${name}.${field}`, PLAN_ENTRY);
  return `${mismatchMessage(`plans.${name}.${field}`, PLAN_ENTRY.properties[field] ?? {})}, got ${JSON.stringify(error.value)}`;
}

/** The plan an entry of the plans file makes: what it states, else what the plan had, else the value for a new plan. */
function planFrom(name: string, entry: Readonly<Record<string, unknown>>, prev: Plan | undefined): Plan {
  const valueOf = (field: Field<unknown>, had: unknown, whenNew: unknown): unknown => {
    if (Object.hasOwn(entry, field.field)) return entry[field.field];
    if (had !== undefined) return had;
    if (whenNew !== undefined) return whenNew;
    throw new PlanFileError(`new plan "${name}" needs ${field.field}`);
  };
  // Each value passed its field's schema, whose static type the tables tie to the property's.
  const limits = Object.fromEntries(
    Object.entries(LIMITS).map(([key, field]) => [key, valueOf(field, prev?.[key as keyof Limits], field.whenNew)]),
  ) as unknown as Limits;
  const capabilities = Object.fromEntries(
    Object.entries(CAPABILITIES).map(([key, field]) => [key, valueOf(field, prev?.capabilities[key as keyof PlanCapabilities], field.least)]),
  ) as unknown as PlanCapabilities;
  // A batch counts each event per minute: one larger than the RPM could never be accepted (429 forever).
  if (limits.batchMax > limits.rpm) throw new PlanFileError(`plans.${name}: batch_max (${limits.batchMax}) must not exceed rpm (${limits.rpm})`);
  return Object.freeze(Object.assign({ name }, limits, { capabilities: Object.freeze(capabilities) }));
}

/** A plan as its entry in the plans file states it: every field, in the order of the tables above. */
export function planFileEntry(plan: Plan): Readonly<Record<string, unknown>> {
  return Object.fromEntries([
    ...Object.entries(LIMITS).map(([key, field]) => [field.field, plan[key as keyof Limits]]),
    ...Object.entries(CAPABILITIES).map(([key, field]) => [field.field, plan.capabilities[key as keyof PlanCapabilities]]),
  ]);
}

/** Parses `VIGIL_PLANS_FILE` content over the defaults. Throws PlanFileError with the exact problem. */
export function parsePlans(json: string, base: PlanTable = DEFAULT_PLANS): PlanTable {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (err) {
    throw new PlanFileError(`is not valid JSON (${errorMessage(err)})`);
  }
  if (!PlanFile.Check(doc)) throw new PlanFileError('must be an object {"plans": {"<name>": {...}}}');
  const table: Record<string, Plan> = { ...base };
  for (const [name, entry] of Object.entries(doc.plans)) {
    if (!PlanName.Check(name)) throw new PlanFileError(`plan name "${name}" must be lowercase letters, digits, - or _`);
    const problem = entryProblem(name, entry);
    if (problem !== undefined) throw new PlanFileError(problem);
    table[name] = planFrom(name, entry as Readonly<Record<string, unknown>>, planNamed(table, name));
  }
  return Object.freeze(table);
}

export function loadPlans(file: string | undefined): PlanTable {
  if (!file) return DEFAULT_PLANS;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PlanFileError(`cannot be read (${errorCode(err) ?? errorMessage(err)})`);
  }
  return parsePlans(text);
}
