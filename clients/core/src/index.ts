export { VigilClient, COOLDOWN_MS, PROBE_PERIOD_MS, type CloseOptions } from './client.js';
export { VigilError, type Undelivered } from './errors.js';
export { ASSUMED_POLICIES, parsePolicies, type Policy } from './pacing.js';
export { uuidv7 } from './event-id.js';
export { fetchSend, realSleep, systemClock } from './transport.js';
export type {
  Answer,
  BatchResult,
  ClientOptions,
  ClientStats,
  Clock,
  Outcome,
  RiskContribution,
  RiskDecision,
  Send,
  Sleep,
  TrackResult,
  VigilEvent,
} from './types.js';
