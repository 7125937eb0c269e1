import type { BatchResult, Outcome } from './types.js';

/** The outcomes of events that were not delivered. */
export type Undelivered = Exclude<Outcome, 'accepted' | 'buffered'>;

/**
 * An event (or several) that was not delivered, as `onError` receives it and as `track` and
 * `trackBatch` reject with it under `throwOnError`. It is a value describing what happened,
 * never a failure of the client itself.
 */
export class VigilError extends Error {
  override readonly name = 'VigilError';
  /** What happened to the events: `rejected`, `failed`, `rate_limited` or `dropped`. */
  readonly outcome: Undelivered;
  /** HTTP status of the last answer, or null when there was none. */
  readonly status: number | null;
  /** Events concerned. */
  readonly count: number;
  /** The event's id when one event is concerned. */
  readonly eventId: string | undefined;
  /** The whole result of a `trackBatch` call, when it is one. */
  readonly batch: BatchResult | undefined;

  constructor(outcome: Undelivered, status: number | null, count: number, details: { eventId?: string; batch?: BatchResult } = {}) {
    const what = count === 1 ? `event${details.eventId ? ` ${details.eventId}` : ''}` : `${count} events`;
    super(`Vigil: ${what} ${outcome.replace('_', ' ')}${status === null ? '' : ` (HTTP ${status})`}`);
    this.outcome = outcome;
    this.status = status;
    this.count = count;
    this.eventId = details.eventId;
    this.batch = details.batch;
  }
}
