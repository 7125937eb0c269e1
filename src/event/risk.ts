export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';
export type RiskAction = 'allow' | 'challenge' | 'block';

export interface BreakdownLine {
  readonly source: string;
  readonly points: number;
}

export interface Risk {
  readonly score: number;
  readonly level: RiskLevel;
  readonly action: RiskAction;
  readonly breakdown: readonly BreakdownLine[];
}
