import { compositeRisk } from '../scoring/composite.js';
import { DEFAULT_THRESHOLDS, thresholdsOf, type RiskThresholds } from '../scoring/thresholds.js';
import type { Risk } from '../event/risk.js';
import type { AccountContext } from '../event/account.js';
import type { DetectedEvent, ScoredEvent } from '../event/types.js';
import type { Modelled, Scored } from './request.js';
import type { Stage } from './stage.js';

/** One event's risk. */
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

/** Scores each admitted event on all of its alerts, and gives it the id it is stored under. */
export function scoreStage(score: ScoreStage): Stage<Modelled, Scored> {
  return (request) => {
    const { modelled, ids, account } = request;
    const scored: ScoredEvent[] = [];
    for (let n = 0; n < modelled.length; n++) {
      const event = modelled[n] as DetectedEvent;
      scored.push(Object.assign(event, { id: ids[n] as string, risk: score(event, account) }));
    }
    return Object.assign(request, { scored });
  };
}
