export { compositeRisk } from './composite.js';
export { actionOf, DEFAULT_THRESHOLDS, levelOf, thresholdsOf, validateRiskSettings } from './thresholds.js';
export type { RiskSettings, RiskSettingsResult, RiskThresholds, SettingsError } from './thresholds.js';
export { SCORE_WEIGHTS, SEVERITY_WEIGHTS } from './weights.js';
