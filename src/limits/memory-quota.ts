import { systemClock, type Clock } from '../util/clock.js';
import { splitReservation } from './quota-math.js';
import type { QuotaCounter, QuotaDecision, QuotaPlan, UsageSeed } from './types.js';
import { HOUR_MS } from '../util/duration.js';

export interface MemoryQuotaCounterOptions {
  /** Counters untouched this long are forgotten and re-seeded from the store when needed. Default 1 h. */
  readonly idleMs?: number;
  readonly clock?: Clock;
}

interface MonthCounter {
  used: number;
  dropped: number;
  touchedAt: number;
}

/**
 * The embedded quota: one counter per account and month, seeded once from the store
 * (concurrent first calls share the one seeding) and kept in memory from then on. All
 * updates after seeding are synchronous, so reservations never race each other.
 */
export class MemoryQuotaCounter implements QuotaCounter {
  private readonly counters = new Map<string, MonthCounter>();
  private readonly seeding = new Map<string, Promise<MonthCounter>>();
  private readonly idleMs: number;
  private readonly clock: Clock;
  private nextSweepAt: number;

  constructor(
    private readonly seed: UsageSeed,
    options: MemoryQuotaCounterOptions = {},
  ) {
    this.idleMs = options.idleMs ?? HOUR_MS;
    this.clock = options.clock ?? systemClock;
    this.nextSweepAt = this.clock.now() + this.idleMs;
  }

  async reserve(accountId: string, period: string, events: number, plan: QuotaPlan): Promise<QuotaDecision> {
    const counter = await this.counter(accountId, period);
    const decision = splitReservation(counter.used, events, plan);
    counter.used += decision.accepted;
    counter.dropped += decision.dropped;
    return decision;
  }

  async release(accountId: string, period: string, decision: QuotaDecision): Promise<void> {
    const counter = await this.counter(accountId, period);
    counter.used = Math.max(0, counter.used - decision.accepted);
    counter.dropped = Math.max(0, counter.dropped - decision.dropped);
  }

  async current(accountId: string, period: string): Promise<{ readonly used: number; readonly dropped: number }> {
    const counter = await this.counter(accountId, period);
    return { used: counter.used, dropped: counter.dropped };
  }

  async absorb(accountId: string, period: string, counts: { readonly used: number; readonly dropped: number }): Promise<void> {
    const counter = this.counters.get(`${accountId}\u0000${period}`);
    if (!counter) return;
    counter.used = Math.max(0, counter.used + counts.used);
    counter.dropped = Math.max(0, counter.dropped + counts.dropped);
  }

  /** Forgets every month (each is seeded again from the store when next needed). */
  clear(): void {
    this.counters.clear();
  }

  async close(): Promise<void> {
    this.clear();
  }

  /** Counters held (account-months). */
  get size(): number {
    return this.counters.size;
  }

  private counter(accountId: string, period: string): MonthCounter | Promise<MonthCounter> {
    const now = this.clock.now();
    if (now >= this.nextSweepAt) this.sweep(now);
    const id = `${accountId}\u0000${period}`;
    const known = this.counters.get(id);
    if (known) {
      known.touchedAt = now;
      return known;
    }
    let pending = this.seeding.get(id);
    if (!pending) {
      pending = this.load(id, accountId, period);
      this.seeding.set(id, pending);
    }
    return pending;
  }

  private async load(id: string, accountId: string, period: string): Promise<MonthCounter> {
    try {
      const seeded = await this.seed(accountId, period);
      const counter: MonthCounter = { used: seeded.used, dropped: seeded.dropped, touchedAt: this.clock.now() };
      this.counters.set(id, counter);
      return counter;
    } finally {
      this.seeding.delete(id);
    }
  }

  private sweep(now: number): void {
    this.nextSweepAt = now + this.idleMs;
    for (const [id, counter] of this.counters) {
      if (now - counter.touchedAt >= this.idleMs) this.counters.delete(id);
    }
  }
}
