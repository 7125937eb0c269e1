import type { EventResult } from './store.js';

interface Entry {
  readonly promise: Promise<EventResult | undefined>;
  readonly settle: (result: EventResult | undefined) => void;
}

/**
 * Event ids being processed right now, so that a retry arriving before the first attempt
 * committed waits for it instead of storing the event twice.
 */
export class InFlightEvents {
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
