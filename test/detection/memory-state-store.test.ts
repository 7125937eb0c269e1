import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { ManualClock } from '../../src/util/clock.js';

const T0 = Date.UTC(2026, 0, 15);

describe('MemoryStateStore bounds', () => {
  it('evicts the least recently written records past maxRecords', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, maxRecords: 3, sweepIntervalMs: 0, sweepPerRun: 0 });
    for (const k of ['acc_t|a', 'acc_t|b', 'acc_t|c']) {
      await store.run([{ kind: 'counter.add', key: k, field: 'n', at: T0, amount: 1, ttlMs: 600_000 }]);
      clock.advance(61_000);
    }
    await store.run([{ kind: 'counter.add', key: 'acc_t|a', field: 'n', at: T0, amount: 1, ttlMs: 600_000 }]); // a is now the most recent
    await store.run([{ kind: 'counter.add', key: 'acc_t|d', field: 'n', at: T0, amount: 1, ttlMs: 600_000 }]);
    expect(store.size).toBe(3);
    const [a, b] = await store.run([
      { kind: 'counter.add', key: 'acc_t|a', field: 'n', at: T0, amount: 0, ttlMs: 600_000 },
      { kind: 'counter.add', key: 'acc_t|b', field: 'n', at: T0, amount: 0, ttlMs: 600_000 },
    ]);
    expect(a.value).toBe(2);
    expect(b.value).toBe(0); // b was evicted
    await store.close();
  });

  it('shrinks when idle: a sweep releases every expired record without traffic to them', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, sweepIntervalMs: 0, sweepPerRun: 0 });
    const ops = Array.from({ length: 1000 }, (_, i) => ({ kind: 'window.add' as const, key: `acc_t|actor:${i}`, field: 'fail', at: T0, windowMs: 300_000 }));
    await store.run(ops);
    await store.run([{ kind: 'seen.add', key: 'acc_t|keep', field: 'c', member: 'FR', at: T0, withinMs: 1e10, ttlMs: 3_600_000 }]);
    expect(store.size).toBe(1001);
    clock.advance(302_000);
    store.sweep(10_000);
    expect(store.size).toBe(1);
    await store.close();
  });

  it('sweeps a few records per batch so steady traffic alone keeps memory bounded', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, sweepIntervalMs: 0, sweepPerRun: 4 });
    for (let i = 0; i < 500; i++) await store.run([{ kind: 'counter.add', key: `acc_t|old:${i}`, field: 'n', at: T0, amount: 1, ttlMs: 1000 }]);
    clock.advance(5000);
    for (let i = 0; i < 300; i++) await store.run([{ kind: 'counter.add', key: 'acc_t|hot', field: 'n', at: T0, amount: 1, ttlMs: 1000 }]);
    expect(store.size).toBe(1);
    await store.close();
  });
});
