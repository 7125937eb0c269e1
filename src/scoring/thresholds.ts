import { Type } from '@sinclair/typebox';
import type { RiskAction, RiskLevel } from '../event/risk.js';
import { schemaCheck } from '../util/schema-check.js';

export interface RiskThresholds {
  /** Scores at or above this are `challenge` (default 50). */
  readonly challenge: number;
  /** Scores at or above this are `block` (default 80). */
  readonly block: number;
}

export const DEFAULT_THRESHOLDS: RiskThresholds = Object.freeze({ challenge: 50, block: 80 });

/** The `risk` part of account settings, as PATCH /v1/settings accepts it. */
export interface RiskSettings {
  readonly challenge?: number;
  readonly block?: number;
}

export interface SettingsError {
  readonly field: string;
  readonly message: string;
}

export type RiskSettingsResult = { readonly ok: true; readonly value: RiskSettings } | { readonly ok: false; readonly errors: readonly SettingsError[] };

const Score = Type.Integer({ minimum: 1, maximum: 100 });
/** `settings.risk`, as PATCH /v1/settings accepts it. */
const RiskSettingsSchema = Type.Object(
  { challenge: Type.Optional(Score), block: Type.Optional(Score) },
  { additionalProperties: false, message: 'risk must be an object {"challenge": 50, "block": 80}' },
);
const checkRisk = schemaCheck(RiskSettingsSchema, 'risk');

/**
 * Validates `settings.risk`: `{challenge?: 1..100, block?: 1..100}`, whole numbers (its schema),
 * and the challenge threshold below the block threshold (either one checked against the other's
 * effective value, default when absent). `field` names are paths under `risk`.
 */
export function validateRiskSettings(value: unknown, defaults: RiskThresholds = DEFAULT_THRESHOLDS): RiskSettingsResult {
  const checked = checkRisk(value);
  if (!checked.ok) return checked;
  const settings: RiskSettings = checked.value;
  const effective = resolve(settings, defaults);
  if (effective.challenge >= effective.block) {
    const field = settings.challenge !== undefined ? 'risk.challenge' : 'risk.block';
    return {
      ok: false,
      errors: [{ field, message: `the challenge threshold (${effective.challenge}) must be below the block threshold (${effective.block})` }],
    };
  }
  return { ok: true, value: settings };
}

const resolve = (settings: RiskSettings, defaults: RiskThresholds): RiskThresholds => ({
  challenge: settings.challenge ?? defaults.challenge,
  block: settings.block ?? defaults.block,
});

const cache = new WeakMap<object, RiskThresholds>();

/**
 * The thresholds of an account, from `account.settings.risk`. Settings that do not validate
 * (written before a rule changed) fall back to the defaults rather than failing ingestion.
 * Memoised per settings object: accounts are re-read when their settings change.
 */
export function thresholdsOf(accountSettings: Readonly<Record<string, unknown>>, defaults: RiskThresholds = DEFAULT_THRESHOLDS): RiskThresholds {
  const risk = accountSettings.risk;
  if (risk === undefined || risk === null || typeof risk !== 'object') return defaults;
  const hit = cache.get(risk);
  if (hit && defaults === DEFAULT_THRESHOLDS) return hit;
  const result = validateRiskSettings(risk, defaults);
  const thresholds = result.ok ? resolve(result.value, defaults) : defaults;
  if (defaults === DEFAULT_THRESHOLDS) cache.set(risk, thresholds);
  return thresholds;
}

/** Risk levels: low 0-19, medium 20-49, high 50-79, critical 80-100. */
export function levelOf(score: number): RiskLevel {
  return score >= 80 ? 'critical' : score >= 50 ? 'high' : score >= 20 ? 'medium' : 'low';
}

export function actionOf(score: number, t: RiskThresholds): RiskAction {
  return score >= t.block ? 'block' : score >= t.challenge ? 'challenge' : 'allow';
}
