import { systemClock, type Clock } from '../util/clock.js';
import { luaScript } from './lua.js';
import { hashTag, RedisScript, type RedisClient } from './script.js';
import type { QuotaCounter, QuotaDecision, QuotaPlan, UsageSeed } from '../limits/types.js';
import { DAY_MS } from '../util/duration.js';

const RESERVE_LUA = luaScript('quota-reserve');
const SEED_LUA = luaScript('quota-seed');
const ADJUST_LUA = luaScript('quota-adjust');

export interface RedisQuotaCounterOptions {
  /** Prefix of every key this counter writes. Default 'vigil:'. */
  readonly prefix?: string;
  /**
   * How long a month's counters stay in Redis after the month ends (then the store
   * answers), and at least after seeding. Default 7 days.
   */
  readonly keepAfterMonthMs?: number;
  readonly clock?: Clock;
}

/**
 * The scale-out quota: one hash per account and month (`<prefix>quota:{accountId}:YYYY-MM`,
 * fields used and dropped) updated atomically by Lua, one round trip per reservation.
 * A month missing from Redis is seeded from the store once per instance at a time; the
 * seed script writes only if no other instance did first. Keys expire a while after
 * their month. The client belongs to the caller; close() leaves it open.
 */
export class RedisQuotaCounter implements QuotaCounter {
  private readonly reserveScript: RedisScript;
  private readonly seedScript: RedisScript;
  private readonly adjustScript: RedisScript;
  private readonly prefix: string;
  private readonly keepAfterMonthMs: number;
  private readonly seeding = new Map<string, Promise<void>>();
  private readonly clock: Clock;

  constructor(
    private readonly client: RedisClient,
    private readonly seed: UsageSeed,
    options: RedisQuotaCounterOptions = {},
  ) {
    this.reserveScript = new RedisScript(client, RESERVE_LUA, 1);
    this.seedScript = new RedisScript(client, SEED_LUA, 1);
    this.adjustScript = new RedisScript(client, ADJUST_LUA, 1);
    this.prefix = options.prefix ?? 'vigil:';
    this.keepAfterMonthMs = options.keepAfterMonthMs ?? 7 * DAY_MS;
    this.clock = options.clock ?? systemClock;
  }

  async reserve(accountId: string, period: string, events: number, plan: QuotaPlan): Promise<QuotaDecision> {
    const key = this.keyOf(accountId, period);
    for (let attempt = 0; attempt < 3; attempt++) {
      const [accepted, dropped] = (await this.reserveScript.run([key], [events, plan.monthlyCap, plan.overage])) as [number, number];
      if (accepted >= 0) return { accepted, dropped };
      await this.ensureSeeded(key, accountId, period);
    }
    throw new Error(`quota counter ${key} vanished right after seeding three times (Redis evicting keys?)`);
  }

  async release(accountId: string, period: string, decision: QuotaDecision): Promise<void> {
    await this.adjustScript.run([this.keyOf(accountId, period)], [-decision.accepted, -decision.dropped]);
  }

  async absorb(accountId: string, period: string, counts: { readonly used: number; readonly dropped: number }): Promise<void> {
    await this.adjustScript.run([this.keyOf(accountId, period)], [counts.used, counts.dropped]);
  }

  async current(accountId: string, period: string): Promise<{ readonly used: number; readonly dropped: number }> {
    const key = this.keyOf(accountId, period);
    let [used, dropped] = await this.client.hmget(key, 'used', 'dropped');
    if (used === null) {
      await this.ensureSeeded(key, accountId, period);
      [used, dropped] = await this.client.hmget(key, 'used', 'dropped');
    }
    return { used: Number(used ?? 0), dropped: Number(dropped ?? 0) };
  }

  async close(): Promise<void> {}

  private keyOf(accountId: string, period: string): string {
    return `${this.prefix}quota:${hashTag(accountId)}:${period}`;
  }

  private ensureSeeded(key: string, accountId: string, period: string): Promise<void> {
    let pending = this.seeding.get(key);
    if (!pending) {
      pending = (async () => {
        try {
          const { used, dropped } = await this.seed(accountId, period);
          const ttlMs = Math.max(monthEnd(period) - this.clock.now(), 0) + this.keepAfterMonthMs;
          await this.seedScript.run([key], [used, dropped, ttlMs]);
        } finally {
          this.seeding.delete(key);
        }
      })();
      this.seeding.set(key, pending);
    }
    return pending;
  }
}

/** First millisecond after the month `YYYY-MM` (UTC). */
export function monthEnd(period: string): number {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return Date.UTC(year, month, 1);
}
