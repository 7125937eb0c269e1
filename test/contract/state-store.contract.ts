import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateOp, StateStore } from '../../src/detection/state/state-store.js';

/** What a backend gives the suite: the store, and a way to move wall time when it can. */
export interface StateStoreHarness {
  readonly store: StateStore;
  /** Moves the store's wall clock forward (memory: a ManualClock). Absent: lifetime tests are skipped. */
  readonly advanceWallMs?: (ms: number) => Promise<void> | void;
}

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const MIN = 60_000;

/**
 * The behaviour every StateStore must show. Each test writes under a fresh key prefix, so a
 * shared backend (one Redis for the whole run) needs no cleaning.
 */
export function stateStoreContract(name: string, factory: () => Promise<StateStoreHarness> | StateStoreHarness): void {
  describe(`StateStore contract: ${name}`, () => {
    let h: StateStoreHarness;
    let store: StateStore;
    let p: string;
    beforeEach(async () => {
      h = await factory();
      store = h.store;
      p = `acc_${randomUUID().replaceAll('-', '')}|contract-`;
    });
    afterEach(async () => {
      await store.close();
    });

    const one = async <O extends StateOp>(op: O) => (await store.run([op] as const))[0];

    describe('window.add', () => {
      const add = (at: number, amount?: number, maxEntries?: number) =>
        one({
          kind: 'window.add',
          key: `${p}w`,
          field: 'f',
          at,
          windowMs: 5 * MIN,
          ...(amount === undefined ? {} : { amount }),
          ...(maxEntries === undefined ? {} : { maxEntries }),
        });

      it('counts entries inside the window and forgets older ones', async () => {
        for (let i = 0; i < 9; i++) expect((await add(T0 + i * 1000)).sum).toBe(i + 1);
        expect((await add(T0 + 5 * MIN + 500)).sum).toBe(9); // T0 left the window: (end - 5 min, end]
        expect((await add(T0 + 20 * MIN)).entries).toBe(1);
      });

      it('answers the same count whatever the arrival order inside the window', async () => {
        const times = [9, 3, 7, 1, 8, 0, 5, 2, 6, 4].map((s) => T0 + s * 10_000);
        let last = 0;
        for (const t of times) last = (await add(t)).sum;
        expect(last).toBe(10);
      });

      it('ignores a late event that falls before the window', async () => {
        await add(T0 + 10 * MIN);
        expect((await add(T0)).sum).toBe(1);
      });

      it('sums amounts, and amount 0 only reads', async () => {
        await add(T0, 40_000);
        await add(T0 + MIN, 15_000);
        expect(await add(T0 + 2 * MIN, 0)).toEqual({ sum: 55_000, entries: 2 });
        expect((await add(T0 + 7 * MIN, 0)).sum).toBe(0);
      });

      it('a read on a key never written answers zero and creates nothing', async () => {
        expect(await one({ kind: 'window.add', key: `${p}none`, field: 'f', at: T0, windowMs: MIN, amount: 0 })).toEqual({ sum: 0, entries: 0 });
      });

      it('saturates at maxEntries', async () => {
        for (let i = 0; i < 30; i++) await add(T0 + i, 1, 10);
        expect((await add(T0 + 31, 1, 10)).entries).toBe(10);
      });

      it('keeps fields and keys apart', async () => {
        await add(T0);
        expect((await one({ kind: 'window.add', key: `${p}w`, field: 'g', at: T0, windowMs: 5 * MIN })).sum).toBe(1);
        expect((await one({ kind: 'window.add', key: `${p}other`, field: 'f', at: T0, windowMs: 5 * MIN })).sum).toBe(1);
        expect((await add(T0 + 1)).sum).toBe(2);
      });
    });

    describe('distinct.add', () => {
      const add = (at: number, member?: string, fewTries?: number) =>
        one({
          kind: 'distinct.add',
          key: `${p}d`,
          field: 'f',
          at,
          windowMs: 10 * MIN,
          ...(member === undefined ? {} : { member }),
          ...(fewTries === undefined ? {} : { fewTries }),
        });

      it('counts distinct members in the window', async () => {
        expect(await add(T0, 'a')).toMatchObject({ distinct: 1, memberSeen: false });
        expect(await add(T0 + 1000, 'a')).toMatchObject({ distinct: 1, memberSeen: true });
        expect((await add(T0 + 2000, 'b')).distinct).toBe(2);
        expect((await add(T0 + 3000)).distinct).toBe(2);
        expect((await add(T0 + 10 * MIN + 1500, 'c')).distinct).toBe(2); // a left, b and c remain
        expect((await add(T0 + 30 * MIN)).distinct).toBe(0);
      });

      it('counts members with few tries when asked', async () => {
        for (let i = 0; i < 5; i++) await add(T0 + i, 'noisy');
        await add(T0 + 10, 'quiet1');
        await add(T0 + 11, 'quiet2');
        await add(T0 + 12, 'quiet2');
        expect(await add(T0 + 20, undefined, 3)).toEqual({ distinct: 3, few: 2, memberSeen: false });
      });

      it('remove deletes a member and answers the rest', async () => {
        await add(T0, 'a');
        await add(T0 + 1, 'b');
        expect(await one({ kind: 'distinct.add', key: `${p}d`, field: 'f', at: T0 + 2, windowMs: 10 * MIN, member: 'a', remove: true })).toEqual({
          distinct: 1,
          few: 0,
          memberSeen: true,
        });
        expect(await one({ kind: 'distinct.add', key: `${p}d`, field: 'f', at: T0 + 3, windowMs: 10 * MIN, member: 'zz', remove: true })).toEqual({
          distinct: 1,
          few: 0,
          memberSeen: false,
        });
        expect((await add(T0 + 4, 'a')).memberSeen).toBe(false);
      });

      it('keeps at most 2,000 members without maxMembers', async () => {
        const ops: StateOp[] = Array.from({ length: 2500 }, (_, i) => ({
          kind: 'distinct.add',
          key: `${p}d`,
          field: 'f',
          at: T0 + i,
          windowMs: 10 * MIN,
          member: `m${i}`,
        }));
        await store.run(ops);
        expect((await add(T0 + 2500)).distinct).toBe(2000);
      });

      it('keeps at most maxMembers', async () => {
        for (let i = 0; i < 20; i++) await one({ kind: 'distinct.add', key: `${p}d`, field: 'f', at: T0 + i, windowMs: MIN, member: `m${i}`, maxMembers: 5 });
        expect((await add(T0 + 30)).distinct).toBe(5);
      });
    });

    describe('last.swap', () => {
      const swap = (at: number, value?: unknown) =>
        one({ kind: 'last.swap', key: `${p}l`, field: 'loc', at, ttlMs: 60 * MIN, ...(value === undefined ? {} : { value: value as never }) });

      it('answers the previous value and stores the new one', async () => {
        expect(await swap(T0, { lat: 1 })).toEqual({ previous: null });
        expect(await swap(T0 + 1000, { lat: 2 })).toEqual({ previous: { at: T0, value: { lat: 1 } } });
        expect(await swap(T0 + 2000)).toEqual({ previous: { at: T0 + 1000, value: { lat: 2 } } });
      });

      it('does not let an older event overwrite a newer observation', async () => {
        await swap(T0 + MIN, 'new');
        expect(await swap(T0, 'old')).toEqual({ previous: { at: T0 + MIN, value: 'new' } });
        expect((await swap(T0 + 2 * MIN)).previous?.value).toBe('new');
      });
    });

    describe('seen.add', () => {
      const seen = (at: number, member: string, readOnly = false) =>
        one({ kind: 'seen.add', key: `${p}s`, field: 'country', member, at, withinMs: 90 * 24 * 60 * MIN, ttlMs: 90 * 24 * 60 * MIN, readOnly });

      it('answers whether the member was seen within the age limit, and the set size', async () => {
        expect(await seen(T0, 'FR')).toEqual({ seen: false, size: 1 });
        expect(await seen(T0 + MIN, 'FR')).toEqual({ seen: true, size: 1 });
        expect(await seen(T0 + 2 * MIN, 'DE')).toEqual({ seen: false, size: 2 });
        expect(await seen(T0 + 91 * 24 * 60 * MIN, 'FR')).toMatchObject({ seen: false });
      });

      it('readOnly does not add', async () => {
        expect(await seen(T0, 'FR', true)).toEqual({ seen: false, size: 0 });
        expect(await seen(T0, 'FR')).toEqual({ seen: false, size: 1 });
      });
    });

    it('counter.add adds', async () => {
      const add = (amount: number) => one({ kind: 'counter.add', key: `${p}c`, field: 'logins', at: T0, amount, ttlMs: MIN });
      expect(await add(1)).toEqual({ value: 1 });
      expect(await add(2)).toEqual({ value: 3 });
    });

    describe('sequence.mark', () => {
      const mark = (stage: number, at: number, ref: string) => one({ kind: 'sequence.mark', key: `${p}q`, field: 'chain', stage, at, windowMs: 60 * MIN, ref });

      it('advances through ordered stages and answers every step', async () => {
        expect(await mark(1, T0, 'early')).toEqual({ steps: null });
        expect((await mark(0, T0, 'a')).steps).toHaveLength(1);
        expect(await mark(2, T0 + MIN, 'skip')).toEqual({ steps: null });
        expect((await mark(1, T0 + MIN, 'b')).steps).toHaveLength(2);
        expect(await mark(2, T0 + 2 * MIN, 'c')).toEqual({
          steps: [
            { stage: 0, at: T0, ref: 'a' },
            { stage: 1, at: T0 + MIN, ref: 'b' },
            { stage: 2, at: T0 + 2 * MIN, ref: 'c' },
          ],
        });
      });

      it('refuses a stage outside the window or before its predecessor', async () => {
        await mark(0, T0, 'a');
        expect(await mark(1, T0 + 61 * MIN, 'late')).toEqual({ steps: null });
        await mark(0, T0 + 2 * MIN, 'a2');
        expect(await mark(1, T0 + MIN, 'before')).toEqual({ steps: null });
        expect((await mark(1, T0 + 61 * MIN, 'ok')).steps?.[0]).toEqual({ stage: 0, at: T0 + 2 * MIN, ref: 'a2' });
      });
    });

    describe('ordered.add', () => {
      const add = (stages: number[], at: number, ref: string, windowMs = 10 * MIN, maxPerStage?: number) =>
        one({
          kind: 'ordered.add',
          key: `${p}o`,
          field: 'seq',
          stages,
          stageCount: 3,
          at,
          windowMs,
          ref,
          ...(maxPerStage === undefined ? {} : { maxPerStage }),
        });
      const refs = (r: { steps: readonly { ref: unknown }[] | null }) => r.steps?.map((s) => s.ref) ?? null;

      it('completes a chain in event-time order, whatever order the steps arrive in', async () => {
        expect(refs(await add([2], T0 + 3 * MIN, 'c'))).toBeNull();
        expect(refs(await add([1], T0 + 2 * MIN, 'b'))).toBeNull();
        // The first step arrives last: the chain it starts is complete.
        expect(await add([0], T0 + MIN, 'a')).toEqual({
          steps: [
            { stage: 0, at: T0 + MIN, ref: 'a' },
            { stage: 1, at: T0 + 2 * MIN, ref: 'b' },
            { stage: 2, at: T0 + 3 * MIN, ref: 'c' },
          ],
        });
        // A step out of order for every chain completes nothing.
        expect(refs(await add([0], T0 + 4 * MIN, 'a-after'))).toBeNull();
      });

      it('spans less than the window: a chain exactly one window long has left it', async () => {
        await add([0], T0, 'a');
        await add([1], T0 + MIN, 'b');
        expect(refs(await add([2], T0 + 10 * MIN, 'edge'))).toBeNull();
        expect(refs(await add([2], T0 + 10 * MIN - 1, 'inside'))).toEqual(['a', 'b', 'inside']);
      });

      it('picks the chain spanning the least time and lets one event serve as one stage only', async () => {
        await add([0], T0, 'a-old');
        await add([0], T0 + 5 * MIN, 'a-new');
        await add([2], T0 + 14 * MIN, 'c');
        expect(refs(await add([1], T0 + 6 * MIN, 'b'))).toEqual(['a-new', 'b', 'c']);
        // An event meeting all three stages alone is no chain.
        expect(refs(await add([0, 1, 2], T0 + 30 * MIN, 'all'))).toBeNull();
      });

      it('keeps at most maxPerStage sightings a stage, the latest', async () => {
        for (let i = 0; i < 5; i++) await add([0], T0 + i * 1000, `a${i}`, 10 * MIN, 2);
        await add([1], T0 + 10_000, 'b', 10 * MIN, 2);
        expect(refs(await add([2], T0 + 20_000, 'c', 10 * MIN, 2))).toEqual(['a4', 'b', 'c']);
        // a0 is gone: a late second step before a3 finds no first step.
        expect(refs(await add([1], T0 + 500, 'b-early', 10 * MIN, 2))).toBeNull();
      });
    });

    describe('alert.open and alert.peek', () => {
      const open = (at: number, id: string, eventId?: string, maxEventIds?: number) =>
        one({
          kind: 'alert.open',
          key: `${p}a`,
          field: 'auth.brute_force.account',
          at,
          id,
          windowMs: 5 * MIN,
          ...(eventId ? { eventId } : {}),
          ...(maxEventIds ? { maxEventIds } : {}),
        });
      const peek = (at: number) => one({ kind: 'alert.peek', key: `${p}a`, field: 'auth.brute_force.account', at, windowMs: 5 * MIN });

      it('opens once, then updates the open alert within the window', async () => {
        expect(await peek(T0)).toEqual({ alert: null });
        expect(await open(T0, 'alr_1', 'evt_1')).toEqual({ opened: true, alert: { id: 'alr_1', count: 1, firstSeen: T0, lastSeen: T0, eventIds: ['evt_1'] } });
        expect(await open(T0 + 4 * MIN, 'alr_2', 'evt_2')).toEqual({
          opened: false,
          alert: { id: 'alr_1', count: 2, firstSeen: T0, lastSeen: T0 + 4 * MIN, eventIds: ['evt_1', 'evt_2'] },
        });
        expect((await peek(T0 + 8 * MIN)).alert?.id).toBe('alr_1');
        expect(await open(T0 + 10 * MIN, 'alr_3')).toMatchObject({ opened: true, alert: { id: 'alr_3', count: 1, eventIds: [] } });
      });

      it('keeps the newest event ids only', async () => {
        for (let i = 0; i < 5; i++) await open(T0 + i, 'alr_1', `evt_${i}`, 3);
        expect((await peek(T0 + 10)).alert).toMatchObject({ count: 5, eventIds: ['evt_2', 'evt_3', 'evt_4'] });
      });

      it('bounds a subject’s alert history: of 1,000 types, with 30 events each and 1,000 for the last, it keeps the 64 last seen, 20 event ids each, and every count', async () => {
        const key = `${p}history`;
        const TYPES = 1000;
        const events = (t: number) => (t === TYPES - 1 ? 1000 : 30);
        const at = (t: number, e: number) => T0 + t * 1000 + e;
        for (let t = 0; t < TYPES; t++) {
          const ops: StateOp[] = Array.from({ length: events(t) }, (_, e) => ({
            kind: 'alert.open' as const,
            key,
            field: `custom.type_${t}`,
            at: at(t, e),
            id: `alr_${t}`,
            windowMs: 60 * MIN,
            eventId: `evt_${t}_${e}`,
          }));
          const results = await store.run(ops);
          expect(results[0]).toMatchObject({ opened: true, alert: { id: `alr_${t}`, count: 1 } });
          expect(results[events(t) - 1]).toMatchObject({ opened: false, alert: { id: `alr_${t}`, count: events(t) } });
        }
        const peeks = await store.run(
          Array.from({ length: TYPES }, (_, t) => ({ kind: 'alert.peek' as const, key, field: `custom.type_${t}`, at: at(TYPES, 0), windowMs: 60 * MIN })),
        );
        const kept = peeks.flatMap((r, t) => ('alert' in r && r.alert !== null ? [t] : []));
        expect(kept).toEqual(Array.from({ length: 64 }, (_, i) => TYPES - 64 + i));
        for (const t of kept) {
          expect(peeks[t]).toEqual({
            alert: {
              id: `alr_${t}`,
              count: events(t),
              firstSeen: at(t, 0),
              lastSeen: at(t, events(t) - 1),
              eventIds: Array.from({ length: 20 }, (_, i) => `evt_${t}_${events(t) - 20 + i}`),
            },
          });
        }
      }, 60_000);

      it('drops the other type last seen longest ago (on a tie the smaller name), and a deleted type frees its room', async () => {
        const key = `${p}few`;
        const open2 = (field: string, at: number, id: string) => one({ kind: 'alert.open', key, field, at, id, windowMs: 60 * MIN, maxAlerts: 2 });
        const alive = async (at: number) => {
          const fields = ['a', 'b', 'c', 'd'];
          const peeks = await store.run(fields.map((field) => ({ kind: 'alert.peek' as const, key, field, at, windowMs: 60 * MIN })));
          return fields.filter((_, i) => (peeks[i] as { alert: unknown }).alert !== null);
        };
        await open2('a', T0, 'alr_a');
        await open2('b', T0 + 1, 'alr_b');
        expect(await open2('a', T0 + 2, 'alr_x')).toMatchObject({ opened: false, alert: { id: 'alr_a', count: 2 } });
        // b was last seen before a.
        expect(await open2('c', T0 + 3, 'alr_c')).toMatchObject({ opened: true });
        expect(await alive(T0 + 4)).toEqual(['a', 'c']);
        // A late event of a dropped type opens it again and drops the oldest of the others.
        expect(await open2('b', T0, 'alr_b2')).toMatchObject({ opened: true, alert: { id: 'alr_b2', count: 1 } });
        expect(await alive(T0 + 4)).toEqual(['b', 'c']);
        expect(await one({ kind: 'delete', key, field: 'c' })).toEqual({ deleted: true });
        await open2('d', T0 + 5, 'alr_d');
        expect(await alive(T0 + 6)).toEqual(['b', 'd']);
        // d and a seen at the same time: the smaller name goes.
        await open2('d', T0 + 7, 'alr_y');
        await open2('a', T0 + 7, 'alr_a2');
        await open2('c', T0 + 7, 'alr_c2');
        expect(await alive(T0 + 8)).toEqual(['c', 'd']);
      });

      it('delete forgets the alert', async () => {
        await open(T0, 'alr_1');
        expect(await one({ kind: 'delete', key: `${p}a`, field: 'auth.brute_force.account' })).toEqual({ deleted: true });
        expect(await peek(T0)).toEqual({ alert: null });
        expect((await open(T0 + 1, 'alr_2')).opened).toBe(true);
      });
    });

    it('runs a batch in order, each op seeing the earlier ones, results at the same index', async () => {
      const key = `${p}batch`;
      const results = await store.run([
        { kind: 'window.add', key, field: 'n', at: T0, windowMs: MIN },
        { kind: 'window.add', key, field: 'n', at: T0 + 1, windowMs: MIN },
        { kind: 'seen.add', key, field: 's', member: 'x', at: T0, withinMs: MIN, ttlMs: MIN },
        { kind: 'seen.add', key, field: 's', member: 'x', at: T0, withinMs: MIN, ttlMs: MIN },
        { kind: 'counter.add', key, field: 'c', at: T0, amount: 5, ttlMs: MIN },
      ] as const);
      expect(results).toEqual([{ sum: 1, entries: 1 }, { sum: 2, entries: 2 }, { seen: false, size: 1 }, { seen: true, size: 1 }, { value: 5 }]);
      expect(await store.run([])).toEqual([]);
    });

    it('keeps every field of a record that grows to many fields, of every kind, and deletes one alone', async () => {
      const key = `${p}many`;
      const ops: StateOp[] = [];
      for (let i = 0; i < 6; i++) {
        ops.push({ kind: 'counter.add', key, field: `c${i}`, at: T0, amount: i + 1, ttlMs: MIN });
        ops.push({ kind: 'seen.add', key, field: `s${i}`, member: `m${i}`, at: T0, withinMs: MIN, ttlMs: MIN });
        ops.push({ kind: 'last.swap', key, field: `l${i}`, at: T0 + i, value: { i }, ttlMs: MIN });
      }
      ops.push({ kind: 'window.add', key, field: 'w', at: T0, windowMs: MIN, amount: 7 });
      await store.run(ops);
      expect(await one({ kind: 'delete', key, field: 'c2' })).toEqual({ deleted: true });
      expect(await one({ kind: 'delete', key, field: 'c2' })).toEqual({ deleted: false });
      const reads = await store.run([
        ...Array.from({ length: 6 }, (_, i) => ({ kind: 'counter.add' as const, key, field: `c${i}`, at: T0, amount: 0, ttlMs: MIN })),
        ...Array.from({ length: 6 }, (_, i) => ({
          kind: 'seen.add' as const,
          key,
          field: `s${i}`,
          member: `m${i}`,
          at: T0 + 1,
          withinMs: MIN,
          ttlMs: MIN,
          readOnly: true,
        })),
        ...Array.from({ length: 6 }, (_, i) => ({ kind: 'last.swap' as const, key, field: `l${i}`, at: T0 + 10, ttlMs: MIN })),
        { kind: 'window.add', key, field: 'w', at: T0 + 1, windowMs: MIN, amount: 0 },
      ]);
      expect(reads.slice(0, 6)).toEqual([1, 2, 0, 4, 5, 6].map((value) => ({ value })));
      expect(reads.slice(6, 12)).toEqual(Array.from({ length: 6 }, () => ({ seen: true, size: 1 })));
      expect(reads.slice(12, 18)).toEqual(Array.from({ length: 6 }, (_, i) => ({ previous: { at: T0 + i, value: { i } } })));
      expect(reads[18]).toEqual({ sum: 7, entries: 1 });
    });

    it('scopes keys by account: one scope per account, stable, never shared', async () => {
      const a = store.scope('acc_one');
      const b = store.scope('acc_two');
      expect(store.scope('acc_one')).toBe(a);
      expect(b).not.toBe(a);
      const add = (scope: string) => one({ kind: 'counter.add', key: `${p}${scope}|x`, field: 'n', at: T0, amount: 1, ttlMs: MIN });
      await add(a);
      expect(await add(b)).toEqual({ value: 1 });
      expect(await add(a)).toEqual({ value: 2 });
    });

    it('releases a record once its lifetime has passed without writes', async (ctx) => {
      if (h.advanceWallMs === undefined) return ctx.skip();
      const key = `${p}ttl`;
      await store.run([{ kind: 'counter.add', key, field: 'c', at: T0, amount: 1, ttlMs: 10_000 }]);
      await h.advanceWallMs(5_000);
      expect(await one({ kind: 'counter.add', key, field: 'c', at: T0, amount: 1, ttlMs: 10_000 })).toEqual({ value: 2 });
      await h.advanceWallMs(13_000);
      expect(await one({ kind: 'counter.add', key, field: 'c', at: T0, amount: 1, ttlMs: 10_000 })).toEqual({ value: 1 });
    });
  });
}
