import { readFileSync } from 'node:fs';
import type { Plan } from '../event/account.js';
import { errorCode, errorMessage } from '../util/caught.js';

/** The four plans and their limits, prices and overage rules. */
export const DEFAULT_PLANS: Readonly<Record<string, Plan>> = Object.freeze({
  free: { name: 'free', rpm: 30, eps: 5, batchMax: 0, monthlyCap: 2_500, overage: 'drop', priceUsdMonth: 0, overageUsdPer1000: null },
  starter: { name: 'starter', rpm: 500, eps: 25, batchMax: 50, monthlyCap: 25_000, overage: 'bill', priceUsdMonth: 12, overageUsdPer1000: 0.4 },
  pro: { name: 'pro', rpm: 1_000, eps: 100, batchMax: 100, monthlyCap: 100_000, overage: 'bill', priceUsdMonth: 0, overageUsdPer1000: null },
  business: { name: 'business', rpm: 2_000, eps: 1_000, batchMax: 100, monthlyCap: 500_000, overage: 'bill', priceUsdMonth: 0, overageUsdPer1000: null },
});

export type PlanTable = Readonly<Record<string, Plan>>;

/**
 * The plan of that name, or undefined. Names come from requests, the database and the
 * environment: only the table's own entries count, never what every object inherits
 * (`constructor`, `__proto__`, `toString`, `valueOf`).
 */
export function planNamed(table: PlanTable, name: string): Plan | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

export class PlanFileError extends Error {}

const NUMERIC_FIELDS = [
  ['rpm', 'rpm'],
  ['eps', 'eps'],
  ['batch_max', 'batchMax'],
  ['monthly_cap', 'monthlyCap'],
  ['price_usd_month', 'priceUsdMonth'],
] as const;

/** Parses `VIGIL_PLANS_FILE` content over the defaults. Throws PlanFileError with the exact problem. */
export function parsePlans(json: string, base: PlanTable = DEFAULT_PLANS): PlanTable {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (err) {
    throw new PlanFileError(`is not valid JSON (${errorMessage(err)})`);
  }
  const plans = (doc as { plans?: unknown } | null)?.plans;
  if (!plans || typeof plans !== 'object' || Array.isArray(plans)) throw new PlanFileError('must be an object {"plans": {"<name>": {...}}}');
  const table: Record<string, Plan> = { ...base };
  for (const [name, raw] of Object.entries(plans as Record<string, unknown>)) {
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) throw new PlanFileError(`plan name "${name}" must be lowercase letters, digits, - or _`);
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new PlanFileError(`plan "${name}" must be an object`);
    const spec = raw as Record<string, unknown>;
    const prev = planNamed(table, name);
    const next: Record<string, unknown> = { ...(prev ?? {}), name };
    for (const [field, prop] of NUMERIC_FIELDS) {
      const v = spec[field];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new PlanFileError(`plans.${name}.${field} must be a number >= 0`);
      if (field !== 'price_usd_month' && !Number.isInteger(v)) throw new PlanFileError(`plans.${name}.${field} must be a whole number`);
      next[prop] = v;
    }
    if (spec.overage !== undefined) {
      if (spec.overage !== 'drop' && spec.overage !== 'bill') throw new PlanFileError(`plans.${name}.overage must be "drop" or "bill"`);
      next.overage = spec.overage;
    }
    if (spec.overage_usd_per_1000 !== undefined) {
      const v = spec.overage_usd_per_1000;
      if (v !== null && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
        throw new PlanFileError(`plans.${name}.overage_usd_per_1000 must be a number >= 0 or null`);
      next.overageUsdPer1000 = v;
    }
    for (const required of ['rpm', 'eps', 'batchMax', 'monthlyCap'] as const) {
      if (next[required] === undefined)
        throw new PlanFileError(`new plan "${name}" needs ${required === 'batchMax' ? 'batch_max' : required === 'monthlyCap' ? 'monthly_cap' : required}`);
    }
    if ((next.rpm as number) < 1 || (next.eps as number) < 1) throw new PlanFileError(`plans.${name}: rpm and eps must be at least 1`);
    // A batch counts each event per minute: one larger than the RPM could never be accepted (429 forever).
    if ((next.batchMax as number) > (next.rpm as number))
      throw new PlanFileError(`plans.${name}: batch_max (${next.batchMax as number}) must not exceed rpm (${next.rpm as number})`);
    table[name] = Object.freeze({
      overage: 'bill',
      priceUsdMonth: 0,
      overageUsdPer1000: null,
      ...next,
    }) as Plan;
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
