import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/limits/memory-limiter.js';
import { limiterContract, T0 } from '../contract/limiter.contract.js';

limiterContract('memory', () => new MemoryRateLimiter(), { propertyRuns: 300 });

describe('MemoryRateLimiter memory', () => {
  it('forgets keys whose windows have emptied and reuses their slots', async () => {
    const limiter = new MemoryRateLimiter({ sweepEveryMs: 1_000, initialCapacity: 4 });
    for (let i = 0; i < 100; i++) await limiter.consumeKey(`k${i}`, { rpm: 10, eps: 5 }, 1, T0);
    for (let i = 0; i < 50; i++) await limiter.hitIp(`ip${i}`, 10, T0);
    expect(limiter.stats()).toMatchObject({ keys: 100, ips: 50 });
    // Still counted 60 s later: nothing may be forgotten yet.
    await limiter.consumeKey('k0', { rpm: 10, eps: 5 }, 1, T0 + 60_999);
    expect(limiter.stats()).toMatchObject({ keys: 100, ips: 50 });
    await limiter.consumeKey('late', { rpm: 10, eps: 5 }, 1, T0 + 120_000);
    // Everything but k0 (counted again at T0+60.999 s) and the new key left its windows.
    expect(limiter.stats()).toMatchObject({ keys: 2, ips: 0 });
    expect((await limiter.peekKey('k0', { rpm: 10, eps: 5 }, T0 + 120_000)).remaining).toBe(9);
    expect((await limiter.peekKey('k1', { rpm: 10, eps: 5 }, T0 + 120_000)).remaining).toBe(10);
  });

  it('a reused slot starts empty', async () => {
    const limiter = new MemoryRateLimiter({ sweepEveryMs: 1, initialCapacity: 1 });
    await limiter.consumeKey('old', { rpm: 10, eps: 5 }, 10, T0);
    await limiter.consumeKey('new', { rpm: 10, eps: 5 }, 1, T0 + 62_000);
    expect(limiter.stats().keys).toBe(1);
    expect((await limiter.peekKey('new', { rpm: 10, eps: 5 }, T0 + 62_000)).remaining).toBe(9);
  });

  it('holds a fixed number of bytes per key', () => {
    const { keySlotBytes, ipSlotBytes } = new MemoryRateLimiter().stats();
    // 61 + 11 buckets and two sums as Uint32, two heads as Float64.
    expect(keySlotBytes).toBe((61 + 1 + 11 + 1) * 4 + 2 * 8);
    expect(ipSlotBytes).toBe((61 + 1) * 4 + 8);
  });
});
