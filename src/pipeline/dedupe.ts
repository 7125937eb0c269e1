import type { AccountContext } from '../event/account.js';
import type { ValidatedEvent } from '../event/types.js';
import type { Store } from '../storage/store.js';
import type { EventResult } from './answer.js';

/** How long an `event_id` is remembered: a retry within it answers with the first result. */
export const IDEMPOTENCY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

interface Entry {
  readonly promise: Promise<EventResult | undefined>;
  readonly settle: (result: EventResult | undefined) => void;
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

  /** Resolves with the first attempt's result, or undefined if it failed or none is running. */
  wait(accountId: string, eventId: string): Promise<EventResult | undefined> | undefined {
    return this.entries.get(InFlightEvents.key(accountId, eventId))?.promise;
  }

  begin(accountId: string, eventId: string): (result: EventResult | undefined) => void {
    const key = InFlightEvents.key(accountId, eventId);
    let settle!: (result: EventResult | undefined) => void;
    const promise = new Promise<EventResult | undefined>((resolve) => (settle = resolve));
    this.entries.set(key, { promise, settle });
    return (result) => {
      if (this.entries.get(key)?.promise === promise) this.entries.delete(key);
      settle(result);
    };
  }
}

export interface Deduplicated {
  /** Answers of events seen before (by `event_id`), at their request index; the rest are undefined. */
  readonly results: (EventResult | undefined)[];
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

  async function previousResult(accountId: string, eventId: string, now: number): Promise<EventResult | undefined> {
    const running = await inFlight.wait(accountId, eventId);
    if (running) return running;
    const row = await store.findIdempotency(accountId, eventId, now - IDEMPOTENCY_WINDOW_MS);
    return row?.response as EventResult | undefined;
  }

  return async (events, ctx, now) => {
    const accountId = ctx.account.id;
    const results: (EventResult | undefined)[] = new Array(events.length);
    const firstIndexOf = new Map<string, number>();
    const fresh: number[] = [];
    const claims = new Map<number, (result: EventResult | undefined) => void>();
    try {
      for (let i = 0; i < events.length; i++) {
        const eventId = (events[i] as ValidatedEvent).eventId;
        if (eventId !== undefined) {
          if (firstIndexOf.has(eventId)) continue;
          firstIndexOf.set(eventId, i);
          let previous = await previousResult(accountId, eventId, now);
          while (!previous && inFlight.wait(accountId, eventId)) previous = await previousResult(accountId, eventId, now);
          if (previous) {
            results[i] = previous;
            continue;
          }
          claims.set(i, inFlight.begin(accountId, eventId));
        }
        fresh.push(i);
      }
    } catch (err) {
      for (const release of claims.values()) release(undefined);
      throw err;
    }
    return {
      results,
      fresh,
      firstIndexOf,
      settle(committed) {
        for (const [i, release] of claims) release(committed ? results[i] : undefined);
      },
    };
  };
}
