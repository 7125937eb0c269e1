import type { AccountContext } from '../event/account.js';
import type { ValidatedEvent } from '../event/types.js';
import type { Store } from '../storage/store.js';
import type { ConflictResult, EventResult } from './answer.js';

/** How long an `event_id` is remembered: a retry within it answers with the first result. */
export const IDEMPOTENCY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/** The answer for an event whose event_id was first used with another payload. */
export function idempotencyConflict(eventId: string): ConflictResult {
  return {
    status: 'rejected',
    error: 'IDEMPOTENCY_CONFLICT',
    message: `event_id "${eventId}" was already used within 7 days for a different event; send a new event with a new event_id, or resend the first one unchanged.`,
  };
}

/** A result answered before for an event_id, with the digest of the event it answered (null: unknown). */
interface Previous {
  readonly result: EventResult;
  readonly digest: string | null;
}

/** Another payload under the same key; a key whose first payload is unknown replays. */
const differs = (first: string | null | undefined, now: string | undefined): boolean => first != null && first !== now;

interface Entry {
  readonly promise: Promise<EventResult | undefined>;
  readonly digest: string | undefined;
}

/**
 * Event ids being processed right now, so that a retry arriving before the first attempt
 * committed waits for it instead of storing the event twice.
 */
class InFlightEvents {
  private readonly entries = new Map<string, Entry>();

  private static key(accountId: string, eventId: string): string {
    return `${accountId}\u0000${eventId}`;
  }

  /** The running attempt: its result (undefined if it failed) and its payload digest. */
  wait(accountId: string, eventId: string): Entry | undefined {
    return this.entries.get(InFlightEvents.key(accountId, eventId));
  }

  begin(accountId: string, eventId: string, digest: string | undefined): (result: EventResult | undefined) => void {
    const key = InFlightEvents.key(accountId, eventId);
    let settle!: (result: EventResult | undefined) => void;
    const promise = new Promise<EventResult | undefined>((resolve) => (settle = resolve));
    this.entries.set(key, { promise, digest });
    return (result) => {
      if (this.entries.get(key)?.promise === promise) this.entries.delete(key);
      settle(result);
    };
  }
}

export interface Deduplicated {
  /**
   * Answers of events seen before (by `event_id`), at their request index: the first result for
   * the same payload, a conflict for another one; the rest are undefined.
   */
  readonly results: (EventResult | undefined)[];
  /** How many of the events reused an event_id with another payload. */
  readonly conflicts: number;
  /** Indexes of the events to process, in order. */
  readonly fresh: readonly number[];
  /** The first index of each `event_id` in the request: later repeats answer with its result. */
  readonly firstIndexOf: ReadonlyMap<string, number>;
  /** Settles every claim: with the events' results once they committed, or undefined when they did not. */
  settle(committed: boolean): void;
}

/**
 * Finds events answered before (by event_id) and claims the new ones: a claim is taken
 * synchronously after the last lookup, so two concurrent requests never both process one event_id.
 */
export type DedupeStage = (events: readonly ValidatedEvent[], ctx: AccountContext, now: number) => Promise<Deduplicated>;

export function createDedupeStage(store: Store): DedupeStage {
  const inFlight = new InFlightEvents();

  async function previousResult(accountId: string, eventId: string, now: number): Promise<Previous | undefined> {
    const running = inFlight.wait(accountId, eventId);
    const result = await running?.promise;
    if (result && running) return { result, digest: running.digest ?? null };
    const row = await store.findIdempotency(accountId, eventId, now - IDEMPOTENCY_WINDOW_MS);
    return row && { result: row.response as EventResult, digest: row.payloadDigest };
  }

  return async (events, ctx, now) => {
    const accountId = ctx.account.id;
    const results: (EventResult | undefined)[] = new Array(events.length);
    const firstIndexOf = new Map<string, number>();
    const fresh: number[] = [];
    const claims = new Map<number, (result: EventResult | undefined) => void>();
    let conflicts = 0;
    try {
      for (let i = 0; i < events.length; i++) {
        const { eventId, payloadDigest } = events[i] as ValidatedEvent;
        if (eventId !== undefined) {
          const first = firstIndexOf.get(eventId);
          if (first !== undefined) {
            // A repeat inside the request: answered with its first occurrence's result (filled in later) or a conflict.
            if (differs((events[first] as ValidatedEvent).payloadDigest, payloadDigest)) {
              results[i] = idempotencyConflict(eventId);
              conflicts++;
            }
            continue;
          }
          firstIndexOf.set(eventId, i);
          let previous = await previousResult(accountId, eventId, now);
          while (!previous && inFlight.wait(accountId, eventId)) previous = await previousResult(accountId, eventId, now);
          if (previous) {
            const conflict = differs(previous.digest, payloadDigest);
            if (conflict) conflicts++;
            results[i] = conflict ? idempotencyConflict(eventId) : previous.result;
            continue;
          }
          claims.set(i, inFlight.begin(accountId, eventId, payloadDigest));
        }
        fresh.push(i);
      }
    } catch (err) {
      for (const release of claims.values()) release(undefined);
      throw err;
    }
    return {
      results,
      conflicts,
      fresh,
      firstIndexOf,
      settle(committed) {
        for (const [i, release] of claims) release(committed ? results[i] : undefined);
      },
    };
  };
}
