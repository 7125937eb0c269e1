import { VigilClient, type ClientOptions } from '@vigil/client-core';

export type NodeClientOptions = ClientOptions;

/**
 * The Vigil client for Node.js 20+ (uses the built-in `fetch`). `await vigil.track(event)`
 * resolves to the risk decision; `void vigil.track(event)` does not wait. Call `close()` at
 * shutdown to send what a buffered client still holds.
 */
export class Vigil extends VigilClient {}

export { requestContext, type IncomingRequestLike, type RequestContextOptions } from './request-context.js';
export { COOLDOWN_MS, PROBE_PERIOD_MS, uuidv7 } from '@vigil/client-core';
export type { BatchResult, ClientStats, Clock, Outcome, RiskDecision, Send, Sleep, TrackResult, VigilEvent } from '@vigil/client-core';
