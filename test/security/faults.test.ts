import { mkdtempSync } from 'node:fs';
import { seededRandom } from '../helpers/random.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import { StoreUnavailableError, type Store } from '../../src/storage/store.js';
import { allEvents, expectError, postEvent, roomyApp, usedThisMonth } from '../http/support.js';

// Many requests per test on a loaded machine: time is not what these tests measure.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const seeded = seededRandom;

/**
 * The real SQLite store whose commit fails on a random share of calls: half the failures
 * happen before the write (nothing stored), half after it (stored, but the caller sees an
 * error: the ambiguous case a retry with the same event_id must resolve).
 */
function flakyCommitStore(share: number, seed: number, mode: 'before' | 'mixed'): { store: Store; failures: { before: number; after: number } } {
  const real = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  const random = seeded(seed);
  const failures = { before: 0, after: 0 };
  const store = new Proxy(real, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== 'commit') return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        const roll = random();
        if (roll < (mode === 'before' ? share : share / 2)) {
          failures.before++;
          throw new StoreUnavailableError('injected: commit failed before writing');
        }
        await (value as (...a: unknown[]) => Promise<void>).apply(target, args);
        if (roll < share) {
          failures.after++;
          throw new StoreUnavailableError('injected: commit failed after writing');
        }
      };
    },
  }) as Store;
  return { store, failures };
}

async function retryUntilAccepted(mode: 'before' | 'mixed'): Promise<void> {
  const seed = Number(process.env.FAULT_SEED ?? 8);
  const { store, failures } = flakyCommitStore(0.3, seed, mode);
  const t = await roomyApp({}, { store });
  try {
    const { secret } = await t.account('pro');
    const N = 300;
    const body = (i: number) => ({
      event: i % 2 ? 'auth.login.failure' : 'data.exported',
      event_id: `fault-${i}`,
      actor_id: `user-${i % 17}`,
      ip: '198.51.100.9',
    });
    const firstIds = new Map<number, string>();
    let pending = Array.from({ length: N }, (_, i) => i);
    let rounds = 0;
    let non202 = 0;
    while (pending.length > 0) {
      expect(rounds++, `seed ${seed}: still failing after 50 rounds`).toBeLessThan(50);
      const answers = await Promise.all(pending.map((i) => postEvent(t, secret, body(i))));
      const next: number[] = [];
      answers.forEach((res, k) => {
        const i = pending[k]!;
        if (res.statusCode === 202) {
          const id = res.json().id as string;
          // A replay answers with the id of the stored copy.
          if (firstIds.has(i)) expect(id).toBe(firstIds.get(i));
          firstIds.set(i, id);
        } else {
          non202++;
          expectError(res, 503, 'UNAVAILABLE');
          expect(res.headers['retry-after']).toBeDefined();
          next.push(i);
        }
      });
      pending = next;
    }
    // Send everything once more: all replays, nothing new.
    for (let i = 0; i < N; i += 50) {
      const again = await Promise.all(Array.from({ length: 50 }, (_, k) => postEvent(t, secret, body(i + k))));
      for (const [k, res] of again.entries()) {
        expect(res.statusCode).toBe(202);
        expect(res.json().id).toBe(firstIds.get(i + k));
      }
    }
    const stored = await allEvents(t, secret);
    const storedEventIds = stored.map((e) => e.event_id as string);
    expect(new Set(storedEventIds).size).toBe(stored.length);
    expect(stored.length).toBe(N);
    expect(new Set(stored.map((e) => e.id))).toEqual(new Set(firstIds.values()));
    expect(await usedThisMonth(t, secret)).toBe(N);
    expect(failures.before + failures.after).toBeGreaterThan(0);
    expect(non202).toBeGreaterThan(0);
    console.log(
      `faults (${mode}): seed ${seed}, ${failures.before} commits failed before writing, ${failures.after} after; ${non202} non-202 answers retried in ${rounds} rounds`,
    );
  } finally {
    await t.close();
  }
}

describe('storage errors injected at random into commit', () => {
  it(
    'commits failing before writing: retrying every non-202 with the same event_id stores each event exactly once, usage does not drift',
    () => retryUntilAccepted('before'),
    180_000,
  );

  it('commits failing after writing (ambiguous outcome) never answer 500', () => retryUntilAccepted('mixed'), 180_000);
});

describe('SQLite busy', () => {
  it('a write lock held by another connection past busy_timeout answers 503 UNAVAILABLE, then 202 after release', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-busy-'));
    const t = await roomyApp({ VIGIL_DATA_DIR: dir });
    const other = new SqliteDatabase(join(dir, 'vigil.db'));
    try {
      const { secret } = await t.account('pro');
      const ev = (i: number) => ({ event: 'auth.login.success', event_id: `busy-${i}`, actor_id: 'alice', ip: '198.51.100.9' });
      expect((await postEvent(t, secret, ev(0))).statusCode).toBe(202);
      // The store's busy_timeout (5 s) blocks its connection synchronously, then gives up.
      other.pragma('busy_timeout = 0');
      other.exec('BEGIN IMMEDIATE');
      const during = await Promise.all([1, 2, 3].map((i) => postEvent(t, secret, ev(i))));
      for (const res of during) expectError(res, 503, 'UNAVAILABLE');
      other.exec('ROLLBACK');
      for (const i of [1, 2, 3]) expect((await postEvent(t, secret, ev(i))).statusCode).toBe(202);
      expect((await allEvents(t, secret)).length).toBe(4);
      expect(await usedThisMonth(t, secret)).toBe(4);
    } finally {
      other.close();
      await t.close();
    }
  }, 60_000);
});
