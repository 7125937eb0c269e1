import { describe, expect, it } from 'vitest';
import { MemoryQuotaCounter } from '../../src/limits/memory-quota.js';
import { monthOf } from '../../src/limits/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { quotaContract } from '../contract/limiter.contract.js';

quotaContract('memory', (seed) => new MemoryQuotaCounter(seed));

describe('MemoryQuotaCounter', () => {
  const drop = { monthlyCap: 2_500, overage: 'drop' } as const;

  it('drops at the Free cap on the last millisecond of the month and starts afresh at 00:00 UTC on the 1st', async () => {
    const quota = new MemoryQuotaCounter(async () => ({ used: 2_499, dropped: 0 }));
    const lastMs = Date.UTC(2026, 0, 31, 23, 59, 59, 999);
    expect(await quota.reserve('a', monthOf(lastMs), 2, drop)).toEqual({ accepted: 1, dropped: 1 });
    expect(await quota.reserve('a', monthOf(lastMs + 1), 2, drop)).toEqual({ accepted: 1, dropped: 1 });
    expect(monthOf(lastMs + 1)).toBe('2026-02');
    // February was seeded (2,499 from the fake store) independently of January.
    expect(await quota.current('a', '2026-01')).toEqual({ used: 2_500, dropped: 1 });
  });

  it('forgets idle counters and re-seeds them from the store', async () => {
    const clock = new ManualClock();
    let seeded = 0;
    const quota = new MemoryQuotaCounter(
      async () => {
        seeded++;
        return { used: 7, dropped: 0 };
      },
      { idleMs: 60_000, clock },
    );
    await quota.reserve('a', '2026-01', 1, drop);
    clock.advance(30_000);
    await quota.reserve('b', '2026-01', 1, drop);
    expect(quota.size).toBe(2);
    clock.advance(45_000);
    await quota.current('b', '2026-01');
    expect(quota.size).toBe(1);
    expect(await quota.current('a', '2026-01')).toEqual({ used: 7, dropped: 0 });
    expect(seeded).toBe(3);
  });
});
