import { compositeRisk } from '../scoring/composite.js';
import { DEFAULT_THRESHOLDS, thresholdsOf, type RiskThresholds } from '../scoring/thresholds.js';
import type { Risk } from '../event/risk.js';
import type { AccountContext } from '../event/account.js';
import type { DetectedEvent } from '../event/types.js';

export type ScoreStage = (event: DetectedEvent, ctx: AccountContext) => Risk;

export interface ScoreSettings {
  /** Service-wide action thresholds; an account's `settings.risk` overrides them. */
  readonly thresholds?: RiskThresholds;
}

/** Composite score with the account's action thresholds. */
export function createScoreStage(settings: ScoreSettings = {}): ScoreStage {
  const defaults = settings.thresholds ?? DEFAULT_THRESHOLDS;
  return (event, ctx) => compositeRisk(event, thresholdsOf(ctx.account.settings, defaults));
}
