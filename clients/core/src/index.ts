export { VigilClient, COOLDOWN_MS, PROBE_PERIOD_MS } from './client.js';
export { uuidv7 } from './event-id.js';
export { fetchSend, realSleep, systemClock } from './transport.js';
export type { Answer, BatchResult, ClientOptions, ClientStats, Clock, Outcome, RiskDecision, Send, Sleep, TrackResult, VigilEvent } from './types.js';
