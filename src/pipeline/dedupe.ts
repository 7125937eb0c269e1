import type { AccountContext } from '../event/account.js';
import type { ValidatedEvent } from '../event/types.js';
import { reject } from '../event/rejection.js';
import type { EventStore } from '../storage/store.js';
import type { ConflictResult, EventResult } from './answer.js';
import { answered } from './outcome.js';
import type { Deduplicated, Limited } from './request.js';
import { Exit, type Stage } from './stage.js';

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

/** One event_id being processed right now by one request. */
class Claim {
  private waiters: ((result: EventResult | undefined) => void)[] | undefined;

  constructor(readonly digest: string | undefined) {}

  /** The claiming request's result once it settles: undefined when its events were not stored. */
  outcome(): Promise<EventResult | undefined> {
    return new Promise((resolve) => (this.waiters ??= []).push(resolve));
  }

  settle(result: EventResult | undefined): void {
    const waiters = this.waiters;
    this.waiters = undefined;
    for (const resolve of waiters ?? []) resolve(result);
  }
}

/**
 * Event ids being processed right now, so that a retry arriving before the first attempt
 * committed waits for it instead of storing the event twice.
 */
class InFlightEvents {
  private readonly claims = new Map<string, Claim>();

  static key(accountId: string, eventId: string): string {
    return `${accountId}\u0000${eventId}`;
  }

  get(key: string): Claim | undefined {
    return this.claims.get(key);
  }

  begin(key: string, digest: string | undefined): Claim {
    const claim = new Claim(digest);
    this.claims.set(key, claim);
    return claim;
  }

  end(key: string, claim: Claim, result: EventResult | undefined): void {
    if (this.claims.get(key) === claim) this.claims.delete(key);
    claim.settle(result);
  }
}

export interface Seen {
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
 * Finds events answered before (by event_id) and claims the new ones. A request looks up all of
 * its open event ids at once and claims them synchronously after that lookup, so two concurrent
 * requests never both process one event_id. It claims only in a round where none of its ids is
 * claimed by another request; otherwise it first waits for those, holding nothing, since a
 * request that waited with claims of its own could wait for one that waits for it.
 */
export type CheckEventIds = (events: readonly ValidatedEvent[], ctx: AccountContext, now: number) => Promise<Seen>;

export function checkEventIds(store: Pick<EventStore, 'findIdempotency'>): CheckEventIds {
  const inFlight = new InFlightEvents();

  return async (events, ctx, now) => {
    const accountId = ctx.account.id;
    const results: (EventResult | undefined)[] = new Array(events.length);
    const firstIndexOf = new Map<string, number>();
    let conflicts = 0;
    const answer = (i: number, previous: Previous): void => {
      const conflict = differs(previous.digest, (events[i] as ValidatedEvent).payloadDigest);
      if (conflict) conflicts++;
      results[i] = conflict ? idempotencyConflict((events[i] as ValidatedEvent).eventId as string) : previous.result;
    };

    // The first occurrence of each event_id; a repeat inside the request answers with its first
    // occurrence's result (filled in later) or a conflict.
    let open: number[] = [];
    for (let i = 0; i < events.length; i++) {
      const { eventId, payloadDigest } = events[i] as ValidatedEvent;
      if (eventId === undefined) continue;
      const first = firstIndexOf.get(eventId);
      if (first === undefined) {
        firstIndexOf.set(eventId, i);
        open.push(i);
      } else if (differs((events[first] as ValidatedEvent).payloadDigest, payloadDigest)) {
        results[i] = idempotencyConflict(eventId);
        conflicts++;
      }
    }

    const claimed: { readonly i: number; readonly key: string; readonly claim: Claim }[] = [];
    while (open.length > 0) {
      const stored = await store.findIdempotency(
        accountId,
        open.map((i) => (events[i] as ValidatedEvent).eventId as string),
        now - IDEMPOTENCY_WINDOW_MS,
      );
      const busy: { readonly i: number; readonly claim: Claim }[] = [];
      const unclaimed: { readonly i: number; readonly key: string }[] = [];
      for (const i of open) {
        const eventId = (events[i] as ValidatedEvent).eventId as string;
        const row = stored.get(eventId);
        if (row !== undefined) {
          answer(i, { result: row.response as EventResult, digest: row.payloadDigest });
          continue;
        }
        const key = InFlightEvents.key(accountId, eventId);
        const running = inFlight.get(key);
        if (running !== undefined) busy.push({ i, claim: running });
        else unclaimed.push({ i, key });
      }
      if (busy.length === 0) {
        for (const { i, key } of unclaimed) claimed.push({ i, key, claim: inFlight.begin(key, (events[i] as ValidatedEvent).payloadDigest) });
        break;
      }
      // Others process some of these ids: their results answer them, and an attempt that failed
      // leaves its id open for the next round, which looks everything open up again.
      const outcomes = await Promise.all(busy.map(({ claim }) => claim.outcome()));
      open = unclaimed.map(({ i }) => i);
      for (let n = 0; n < busy.length; n++) {
        const { i, claim } = busy[n] as (typeof busy)[number];
        const result = outcomes[n];
        if (result === undefined) open.push(i);
        else answer(i, { result, digest: claim.digest ?? null });
      }
    }

    // Every first occurrence is now answered or claimed: the unanswered ones are this request's claims.
    const fresh: number[] = [];
    for (let i = 0; i < events.length; i++) {
      const { eventId } = events[i] as ValidatedEvent;
      if (eventId === undefined || (results[i] === undefined && firstIndexOf.get(eventId) === i)) fresh.push(i);
    }
    return {
      results,
      conflicts,
      fresh,
      firstIndexOf,
      settle(committed) {
        for (const { i, key, claim } of claimed) inFlight.end(key, claim, committed ? results[i] : undefined);
      },
    };
  };
}

/** Every event's answer once the new ones have theirs: a repeat inside the request answers with its first occurrence's. */
export function answersOf(seen: Seen, events: readonly ValidatedEvent[]): EventResult[] {
  const { results } = seen;
  for (let i = 0; i < events.length; i++) {
    if (results[i] === undefined) results[i] = results[seen.firstIndexOf.get((events[i] as ValidatedEvent).eventId as string) as number];
  }
  return results as EventResult[];
}

/**
 * Events sent before (by event_id) are answered here and never reach the quota. A request with
 * nothing new ends here: a replay answers with the first results; a single event whose event_id
 * came with another payload is refused (a batch answers the conflict in that event's place).
 * The claims on the new event ids are the request's to settle.
 */
export function dedupeStage(check: CheckEventIds): Stage<Limited, Deduplicated> {
  return async (request) => {
    const { events } = request;
    const seen = await check(events, request.account, request.now);
    if (seen.fresh.length === 0) {
      const only = seen.results[0];
      if (request.kind === 'single' && only?.status === 'rejected')
        return new Exit({ ok: false, rejection: reject(only.error, only.message), limit: request.limit }, 'rejected_conflict', 1);
      if (seen.conflicts === 0) return new Exit(answered(answersOf(seen, events), request, true), 'duplicate', events.length);
    }
    request.held.claims = seen;
    return Object.assign(request, { seen });
  };
}
