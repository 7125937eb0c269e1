import { expect, it } from 'vitest';
import { monthEnd, RedisQuotaCounter } from '../../src/redis/quota-counter.js';
import { ManualClock } from '../../src/util/clock.js';
import { quotaContract } from '../contract/limiter.contract.js';
import { connectTestRedis, describeWithRedis } from './redis-helper.js';

const redis = await connectTestRedis('redis-quota');

describeWithRedis('RedisQuotaCounter', redis, ({ client, prefix }) => {
  quotaContract('redis', (seed) => new RedisQuotaCounter(client, seed, { prefix }));

  it('expires a month some days after it ends (or after seeding, for a past month)', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 31, 12, 0, 0));
    const quota = new RedisQuotaCounter(client, async () => ({ used: 0, dropped: 0 }), { prefix, keepAfterMonthMs: 86_400_000, clock });
    await quota.reserve('acct_ttl', '2026-01', 1, { monthlyCap: 10, overage: 'drop' });
    const ttl = await client.pttl(`${prefix}quota:{acct_ttl}:2026-01`);
    expect(ttl).toBeGreaterThan(86_400_000 + 12 * 3_600_000 - 5_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000 + 12 * 3_600_000);
    clock.set(Date.UTC(2026, 5, 1));
    await quota.reserve('acct_ttl', '2026-02', 1, { monthlyCap: 10, overage: 'drop' });
    expect(await client.pttl(`${prefix}quota:{acct_ttl}:2026-02`)).toBeGreaterThan(86_400_000 - 5_000);
  });

  it('two counters (two instances) share one month and seed it once', async () => {
    let seeds = 0;
    const seed = async () => {
      seeds++;
      await new Promise((r) => setTimeout(r, 2));
      return { used: 5, dropped: 0 };
    };
    const a = new RedisQuotaCounter(client, seed, { prefix });
    const b = new RedisQuotaCounter(client, seed, { prefix });
    const plan = { monthlyCap: 10, overage: 'drop' } as const;
    const decisions = await Promise.all([a.reserve('acct_two', '2026-03', 3, plan), b.reserve('acct_two', '2026-03', 3, plan)]);
    // Each instance may ask the store once, but only one seed lands: 5 + 5 fit, 1 is dropped.
    expect(seeds).toBeLessThanOrEqual(2);
    expect(decisions.reduce((s, d) => s + d.accepted, 0)).toBe(5);
    expect(await b.current('acct_two', '2026-03')).toEqual({ used: 10, dropped: 1 });
  });

  it('knows where months end', () => {
    expect(monthEnd('2026-01')).toBe(Date.UTC(2026, 1, 1));
    expect(monthEnd('2026-12')).toBe(Date.UTC(2027, 0, 1));
  });
});
