import type { Risk } from '../scoring/types.js';
import type { AccountContext } from './account-context.js';
import type { DetectedEvent } from './types.js';

export type ScoreStage = (event: DetectedEvent, ctx: AccountContext) => Risk;

/** PLACEHOLDER until issue 4 lands: composite score of design 8. */
export function createScoreStage(): ScoreStage {
  return (event) => {
    const base = event.classification.baseScore;
    const breakdown = base > 0 ? [{ source: 'base', points: base }] : [];
    const score = Math.min(100, base);
    return { score, level: score >= 80 ? 'critical' : score >= 50 ? 'high' : score >= 20 ? 'medium' : 'low', action: score >= 80 ? 'block' : score >= 50 ? 'challenge' : 'allow', breakdown };
  };
}
