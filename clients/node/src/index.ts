import { VigilClient, type ClientOptions } from '@vigil/client-core';
import { VERSION } from './version.js';

export type NodeClientOptions = ClientOptions;

/**
 * The Vigil client for Node.js 20+ (uses the built-in `fetch`). `await vigil.track(event)`
 * resolves to the risk decision; `void vigil.track(event)` does not wait. Call
 * `close({ timeoutMs })` at shutdown to send what a buffered client still holds. It identifies
 * itself as `User-Agent: vigil-node/<version>`.
 */
export class Vigil extends VigilClient {
  constructor(options: NodeClientOptions) {
    super({ userAgent: `vigil-node/${VERSION}`, ...options });
  }
}

export { VERSION } from './version.js';
export { requestContext, type IncomingRequestLike, type RequestContextOptions } from './request-context.js';
export { COOLDOWN_MS, PROBE_PERIOD_MS, uuidv7, VigilError } from '@vigil/client-core';
export type {
  BatchResult,
  ClientStats,
  Clock,
  CloseOptions,
  Outcome,
  RiskContribution,
  RiskDecision,
  Send,
  Sleep,
  TrackResult,
  Undelivered,
  VigilEvent,
} from '@vigil/client-core';
