import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStateStore, bytesForHeap } from '../../src/detection/state/memory-state-store.js';
import type { StateOp } from '../../src/detection/state/state-store.js';
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

const MIB = 1024 * 1024;

/** One subject's alert record: `types` alert types with `events` sightings each, in one batch. */
function alertHistory(subject: number, types: number, events: number, at = T0): StateOp[] {
  const ops: StateOp[] = [];
  for (let t = 0; t < types; t++)
    for (let e = 0; e < events; e++)
      ops.push({
        kind: 'alert.open',
        key: `acc_t|alerts|actor:${subject}`,
        field: `custom.model_${t}`,
        at: at + e,
        id: `alr_${subject}_${t}`,
        windowMs: 3_600_000,
        eventId: `evt_${subject}_${t}_${e}`,
      });
  return ops;
}

const alive = async (store: MemoryStateStore, subject: number) =>
  (await store.run([{ kind: 'alert.peek', key: `acc_t|alerts|actor:${subject}`, field: 'custom.model_99', at: T0, windowMs: 3_600_000 }]))[0].alert !== null;

describe('MemoryStateStore byte estimate', () => {
  it('follows every change of every field kind and returns to zero when the records go', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, sweepIntervalMs: 0, sweepPerRun: 0 });
    expect(store.bytes).toBe(0);
    const ops: StateOp[] = [];
    for (let i = 0; i < 200; i++) {
      const key = `acc_t|mixed:${i}`;
      ops.push(
        { kind: 'window.add', key, field: 'w', at: T0 + i, windowMs: 60_000, amount: i % 3 },
        { kind: 'distinct.add', key, field: 'd', at: T0 + i, windowMs: 60_000, member: `m${i % 7}`, maxMembers: 5 },
        { kind: 'seen.add', key, field: 's', at: T0, member: `country-${i % 5}`, withinMs: 1e9, ttlMs: 600_000, maxMembers: 3 },
        { kind: 'seen.add', key, field: 'long', at: T0, member: 'x'.repeat(100 + i), withinMs: 1e9, ttlMs: 600_000 },
        { kind: 'last.swap', key, field: 'l', at: T0 + i, value: { place: `city ${i}`, points: [i, i + 1] }, ttlMs: 600_000 },
        { kind: 'counter.add', key, field: 'c', at: T0, amount: 1, ttlMs: 600_000 },
        { kind: 'sequence.mark', key, field: 'q', at: T0 + i, stage: i % 3, windowMs: 600_000, ref: `evt_${i}` },
      );
      for (let a = 0; a < 4; a++)
        ops.push({
          kind: 'alert.open',
          key,
          field: `a${(a + i) % 5}`,
          at: T0 + i,
          id: `alr_${i}`,
          windowMs: 600_000,
          eventId: `evt_${i}`,
          maxEventIds: 3,
          maxAlerts: 2,
        });
    }
    // The same keys again: every field now changes in place, alert types come and go.
    await store.run(ops);
    expect(store.recountBytes()).toBe(store.bytes);
    await store.run(ops);
    expect(store.recountBytes()).toBe(store.bytes);
    const full = store.bytes;
    expect(full).toBeGreaterThan(200 * 1000);
    // Reads that prune, member removals and field deletions give their bytes back.
    await store.run([
      { kind: 'window.add', key: 'acc_t|mixed:5', field: 'w', at: T0 + 3_600_000, windowMs: 60_000, amount: 0 },
      { kind: 'distinct.add', key: 'acc_t|mixed:5', field: 'd', at: T0, windowMs: 60_000, member: 'm5', remove: true },
      { kind: 'delete', key: 'acc_t|mixed:6', field: 'l' },
      { kind: 'delete', key: 'acc_t|mixed:6', field: 'a2' },
    ]);
    expect(store.bytes).toBeLessThan(full);
    expect(store.recountBytes()).toBe(store.bytes);
    await store.run(Array.from({ length: 100 }, (_, i) => ({ kind: 'delete' as const, key: `acc_t|mixed:${i}`, field: '*' })));
    expect(store.bytes).toBeGreaterThan(0);
    clock.advance(700_000);
    store.sweep(1_000);
    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
    await store.close();
  });

  it('an 8 MB budget holds records of 100 alert types each under it, evicting the oldest first', async () => {
    const clock = new ManualClock();
    const store = new MemoryStateStore({ clock, maxBytes: 8 * MIB, sweepIntervalMs: 0, sweepPerRun: 0 });
    const SUBJECTS = 300;
    let peak = 0;
    for (let s = 0; s < SUBJECTS; s++) {
      await store.run(alertHistory(s, 100, 3));
      peak = Math.max(peak, store.bytes);
    }
    expect(peak).toBeLessThanOrEqual(8 * MIB);
    expect(store.bytes).toBeGreaterThan(7 * MIB);
    expect(store.evictions).toBe(SUBJECTS - store.size);
    expect(store.usage()).toEqual({ bytes: store.bytes, evictions: store.evictions });
    const kept: boolean[] = [];
    for (let s = 0; s < SUBJECTS; s++) kept.push(await alive(store, s));
    // The newest subjects are held, every older one is gone.
    const first = kept.indexOf(true);
    expect(first).toBeGreaterThan(0);
    expect(kept.slice(first).every(Boolean)).toBe(true);
    expect(kept.slice(0, first).some(Boolean)).toBe(false);
    await store.close();
  });

  it('a store sized for a heap keeps huge alert records to its byte budget, where the record count it used to keep would have held many times that', async () => {
    const heap = 64 * MIB;
    const budget = bytesForHeap(heap);
    const store = new MemoryStateStore({ clock: new ManualClock(), maxBytes: budget, sweepIntervalMs: 0, sweepPerRun: 0 });
    for (let s = 0; s < 400; s++) {
      await store.run(alertHistory(s, 100, 20));
      expect(store.bytes).toBeLessThanOrEqual(budget);
    }
    expect(store.evictions).toBeGreaterThan(0);
    expect(store.size).toBeLessThan(400);
    // The record count a heap used to buy (half of it at 512 bytes a record) at these records' size.
    const countCap = Math.max(10_000, Math.floor(heap / 2 / 512));
    expect(countCap * (store.bytes / store.size)).toBeGreaterThan(100 * budget);
    await store.close();
  });
});

/**
 * Runs in a child process with the collector exposed: fills a store with 50,000 records of five
 * kinds (a subject's alert history, a distinct set, a window, an actor's profile of seen sets, a
 * place and a counter, a three-stage sequence) and reports the store's estimate and the heap
 * growth after full collections. Texts are flat, as those parsed from a request are.
 */
const heapProbe = `
import { MemoryStateStore } from '${pathToFileURL(join(process.cwd(), 'src/detection/state/memory-state-store.ts')).href}';
const flat = (s) => [s.slice(0, 1), s.slice(1)].join('');
const used = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
const T0 = ${T0};
const store = new MemoryStateStore({ sweepIntervalMs: 0, sweepPerRun: 0, maxBytes: 1e12 });
const before = used();
for (let i = 0; i < 50000; i++) {
  const ops = [];
  const k = i % 5;
  if (k === 0)
    for (let t = 0; t < 4; t++)
      for (let e = 0; e < 22; e++)
        ops.push({ kind: 'alert.open', key: flat('acc_t|alerts|actor:' + i), field: 'custom.model_' + t, at: T0 + e, id: flat('alr_01KX' + i + '_' + t + '00000000000000'), windowMs: 3600000, eventId: flat('evt_01M8BWQDNW73K9QY6A' + i + '_' + e + 'xxxxxx') });
  if (k === 1) for (let e = 0; e < 40; e++) ops.push({ kind: 'distinct.add', key: flat('acc_t|tm|d|actor:' + i), field: 'v', at: T0 + e, windowMs: 600000, member: flat('203.0.' + (i % 250) + '.' + e) });
  if (k === 2) for (let e = 0; e < 30; e++) ops.push({ kind: 'window.add', key: flat('acc_t|fail|actor:' + i), field: 'n', at: T0 + e * 1000, windowMs: 600000 });
  if (k === 3) {
    const key = flat('acc_t|profile|actor:' + i);
    ops.push({ kind: 'seen.add', key, field: 'country', member: 'FR', at: T0, withinMs: 1e10, ttlMs: 1e10 });
    ops.push({ kind: 'seen.add', key, field: 'device', member: 'dev-' + (i % 7), at: T0, withinMs: 1e10, ttlMs: 1e10 });
    ops.push({ kind: 'seen.add', key, field: 'device', member: 'dev-' + ((i + 1) % 7), at: T0, withinMs: 1e10, ttlMs: 1e10 });
    ops.push({ kind: 'last.swap', key, field: 'place', at: T0, value: flat('Paris, FR (48.85, 2.35) ' + i), ttlMs: 1e10 });
    ops.push({ kind: 'counter.add', key, field: 'logins', at: T0, amount: 1, ttlMs: 1e10 });
  }
  if (k === 4) for (let s = 0; s < 3; s++) ops.push({ kind: 'sequence.mark', key: flat('acc_t|tm|q|actor:' + i), field: 's', at: T0 + s, stage: s, windowMs: 600000, ref: flat('evt_01M8BWQDNW73K9QY6A' + i + '_' + s) });
  store.runSync(ops);
}
console.log(JSON.stringify({ records: store.size, estimate: store.bytes, heap: used() - before }));
`;

const probeDir = mkdtempSync(join(tmpdir(), 'vigil-state-bytes-'));
afterAll(() => rmSync(probeDir, { recursive: true, force: true }));

describe('MemoryStateStore byte estimate against the heap', () => {
  it('is within a quarter of the heap that 50,000 records of alert histories, distinct sets, windows, profiles and sequences take', () => {
    const file = join(probeDir, 'probe.mjs');
    writeFileSync(file, heapProbe);
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file], { encoding: 'utf8', timeout: 120_000 });
    expect(child.stderr).toBe('');
    const { records, estimate, heap } = JSON.parse(child.stdout) as { records: number; estimate: number; heap: number };
    expect(records).toBe(50_000);
    expect(heap).toBeGreaterThan(50 * MIB);
    expect(estimate / heap).toBeGreaterThan(0.75);
    expect(estimate / heap).toBeLessThan(1.33);
  }, 180_000);
});
