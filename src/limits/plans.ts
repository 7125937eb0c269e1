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

type NumericProp = (typeof NUMERIC_FIELDS)[number][1];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses `VIGIL_PLANS_FILE` content over the defaults. Throws PlanFileError with the exact problem. */
export function parsePlans(json: string, base: PlanTable = DEFAULT_PLANS): PlanTable {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (err) {
    throw new PlanFileError(`is not valid JSON (${errorMessage(err)})`);
  }
  const plans = isObject(doc) ? doc.plans : undefined;
  if (!isObject(plans)) throw new PlanFileError('must be an object {"plans": {"<name>": {...}}}');
  const table: Record<string, Plan> = { ...base };
  for (const [name, spec] of Object.entries(plans)) {
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) throw new PlanFileError(`plan name "${name}" must be lowercase letters, digits, - or _`);
    if (!isObject(spec)) throw new PlanFileError(`plan "${name}" must be an object`);
    const prev = planNamed(table, name);
    const numbers: { [P in NumericProp]?: number } = { ...prev };
    for (const [field, prop] of NUMERIC_FIELDS) {
      const v = spec[field];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new PlanFileError(`plans.${name}.${field} must be a number >= 0`);
      if (field !== 'price_usd_month' && !Number.isInteger(v)) throw new PlanFileError(`plans.${name}.${field} must be a whole number`);
      numbers[prop] = v;
    }
    let overage = prev?.overage ?? 'bill';
    if (spec.overage !== undefined) {
      if (spec.overage !== 'drop' && spec.overage !== 'bill') throw new PlanFileError(`plans.${name}.overage must be "drop" or "bill"`);
      overage = spec.overage;
    }
    let overageUsdPer1000 = prev?.overageUsdPer1000 ?? null;
    if (spec.overage_usd_per_1000 !== undefined) {
      const v = spec.overage_usd_per_1000;
      if (v !== null && (typeof v !== 'number' || !Number.isFinite(v) || v < 0))
        throw new PlanFileError(`plans.${name}.overage_usd_per_1000 must be a number >= 0 or null`);
      overageUsdPer1000 = v;
    }
    const { rpm, eps, batchMax, monthlyCap, priceUsdMonth = 0 } = numbers;
    if (rpm === undefined) throw new PlanFileError(`new plan "${name}" needs rpm`);
    if (eps === undefined) throw new PlanFileError(`new plan "${name}" needs eps`);
    if (batchMax === undefined) throw new PlanFileError(`new plan "${name}" needs batch_max`);
    if (monthlyCap === undefined) throw new PlanFileError(`new plan "${name}" needs monthly_cap`);
    if (rpm < 1 || eps < 1) throw new PlanFileError(`plans.${name}: rpm and eps must be at least 1`);
    // A batch counts each event per minute: one larger than the RPM could never be accepted (429 forever).
    if (batchMax > rpm) throw new PlanFileError(`plans.${name}: batch_max (${batchMax}) must not exceed rpm (${rpm})`);
    table[name] = Object.freeze({ name, rpm, eps, batchMax, monthlyCap, overage, priceUsdMonth, overageUsdPer1000 });
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
