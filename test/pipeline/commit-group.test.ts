import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CommitGroup, mergeParts } from '../../src/pipeline/commit-group.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import { StoreRejectedError, StoreUnavailableError, type CommitOptions, type Store } from '../../src/storage/store.js';
import type { CommitBatch, EventRow } from '../../src/storage/types.js';

const row = (id: string, accountId = 'acc_1'): EventRow => ({
  id,
  accountId,
  type: 'custom.x.y',
  eventId: null,
  occurredAt: 0,
  receivedAt: 0,
  actorId: null,
  ip: null,
  riskScore: 0,
  tags: [],
  doc: { id },
});

const part = (ids: string[], used = ids.length): CommitBatch => ({
  events: ids.map((id) => row(id)),
  alerts: [],
  usage: [{ accountId: 'acc_1', period: '2026-01', day: '2026-01-15', used, dropped: 0 }],
  idempotency: [],
});

/** A store that records each commit (one transaction each) and can be made to fail or wait. */
class RecordingStore {
  readonly commits: CommitBatch[] = [];
  readonly alone: boolean[] = [];
  failWhen: (batch: CommitBatch) => Error | undefined = () => undefined;
  gate: Promise<void> | undefined;
  constructor(readonly coalescesCommits = false) {}
  async commit(batch: CommitBatch, options: CommitOptions = {}): Promise<void> {
    this.commits.push(batch);
    this.alone.push(options.alone ?? false);
    if (this.gate) await this.gate;
    const err = this.failWhen(batch);
    if (err) throw err;
  }
  asStore(): Store {
    return this as unknown as Store;
  }
}

const settled = async <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('CommitGroup', () => {
  afterEach(() => vi.useRealTimers());

  it('parts added together share one transaction, with every usage row', async () => {
    const store = new RecordingStore();
    const stats: { parts: number; events: number; ok: boolean }[] = [];
    const group = new CommitGroup(store.asStore(), { windowMs: 0, maxEvents: 1000, onCommit: (s) => stats.push(s) });
    await Promise.all([group.add(part(['a'])), group.add(part(['b', 'c'])), group.add(part(['d']))]);
    expect(store.commits).toHaveLength(1);
    expect(store.commits[0]?.events.map((e) => e.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(store.commits[0]?.usage.map((u) => u.used)).toEqual([1, 2, 1]);
    expect(stats).toEqual([expect.objectContaining({ parts: 3, events: 4, ok: true })]);
  });

  it('a part resolves only after its transaction committed', async () => {
    const store = new RecordingStore();
    let open!: () => void;
    store.gate = new Promise<void>((resolve) => (open = resolve));
    const group = new CommitGroup(store.asStore(), { windowMs: 0, maxEvents: 1000 });
    let done = false;
    const p = group.add(part(['a'])).then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(store.commits).toHaveLength(1);
    expect(done).toBe(false);
    open();
    await p;
    expect(done).toBe(true);
  });

  it('parts arriving while a transaction runs form the next group', async () => {
    const store = new RecordingStore();
    let open!: () => void;
    store.gate = new Promise<void>((resolve) => (open = resolve));
    const group = new CommitGroup(store.asStore(), { windowMs: 0, maxEvents: 1000 });
    const first = group.add(part(['a']));
    await new Promise((r) => setImmediate(r));
    expect(store.commits).toHaveLength(1);
    const later = [group.add(part(['b'])), group.add(part(['c']))];
    await new Promise((r) => setImmediate(r));
    expect(store.commits).toHaveLength(1);
    store.gate = undefined;
    open();
    await Promise.all([first, ...later]);
    expect(store.commits.map((c) => c.events.map((e) => e.id))).toEqual([['a'], ['b', 'c']]);
  });

  it('a failing part does not fail its neighbours', async () => {
    const store = new RecordingStore();
    store.failWhen = (batch) => (batch.events.some((e) => e.id === 'bad') ? new Error('constraint failed') : undefined);
    const group = new CommitGroup(store.asStore(), { windowMs: 0, maxEvents: 1000 });
    const results = await Promise.all([settled(group.add(part(['a']))), settled(group.add(part(['bad', 'x']))), settled(group.add(part(['c'])))]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect((results[1] as { error: Error }).error.message).toBe('constraint failed');
    // One failed group transaction, then one per part, each alone.
    expect(store.commits.map((c) => c.events.map((e) => e.id))).toEqual([['a', 'bad', 'x', 'c'], ['a'], ['bad', 'x'], ['c']]);
    expect(store.alone).toEqual([false, true, true, true]);
  });

  it('a lone part that failed on a coalescing store is written once more alone; elsewhere it fails at once', async () => {
    for (const [coalescesCommits, commits] of [
      [true, 2],
      [false, 1],
    ] as const) {
      const store = new RecordingStore(coalescesCommits);
      // Fails only when coalesced, as a neighbour's bad row in the writer's transaction would make it.
      store.failWhen = () => (store.alone.at(-1) === true ? undefined : new StoreRejectedError('UNIQUE constraint failed'));
      const group = new CommitGroup(store.asStore(), { windowMs: 0, maxEvents: 1000 });
      const result = await settled(group.add(part(['a'])));
      expect(result.ok).toBe(coalescesCommits);
      expect(store.commits).toHaveLength(commits);
    }
  });

  it('an unavailable store fails every part with StoreUnavailableError', async () => {
    const store = new RecordingStore();
    store.failWhen = () => new StoreUnavailableError('disk full');
    const group = new CommitGroup(store.asStore(), { windowMs: 0, maxEvents: 1000 });
    const results = await Promise.all([settled(group.add(part(['a']))), settled(group.add(part(['b'])))]);
    for (const r of results) {
      expect(r.ok).toBe(false);
      expect((r as { error: unknown }).error).toBeInstanceOf(StoreUnavailableError);
    }
  });

  it('waits windowMs for more parts, but commits at once when maxEvents is reached', async () => {
    vi.useFakeTimers();
    const store = new RecordingStore();
    const group = new CommitGroup(store.asStore(), { windowMs: 5, maxEvents: 4 });
    const a = group.add(part(['a']));
    const b = group.add(part(['b']));
    expect(store.commits).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(4);
    expect(store.commits).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.commits).toHaveLength(1);
    await Promise.all([a, b]);

    const big = group.add(part(['c', 'd', 'e', 'f']));
    expect(store.commits).toHaveLength(2);
    await big;
  });

  it('flush commits everything queued, including parts queued during the flush, and waits for it', async () => {
    vi.useFakeTimers();
    const store = new RecordingStore();
    const group = new CommitGroup(store.asStore(), { windowMs: 1000, maxEvents: 1000 });
    let resolved = 0;
    const parts = [group.add(part(['a'])), group.add(part(['b']))].map((p) => p.then(() => resolved++));
    let lateDone = false;
    const flushed = group.flush().then(() => {
      expect(resolved).toBe(2);
    });
    const late = group.add(part(['c'])).then(() => (lateDone = true));
    await flushed;
    await Promise.all(parts);
    expect(store.commits.flatMap((c) => c.events.map((e) => e.id))).toEqual(expect.arrayContaining(['a', 'b', 'c']));
    await late;
    expect(lateDone).toBe(true);
  });

  it('flush with nothing queued returns at once', async () => {
    const store = new RecordingStore();
    const group = new CommitGroup(store.asStore(), { windowMs: 1000, maxEvents: 1000 });
    await group.flush();
    expect(store.commits).toHaveLength(0);
  });

  it('mergeParts keeps every row of every part, in order; on SQLite the committed usage is their sum', async () => {
    const merged = mergeParts([
      { ...part(['a']), usage: [{ accountId: 'acc_1', period: '2026-01', day: '2026-01-15', used: 1, dropped: 2 }] },
      { ...part(['b']), usage: [{ accountId: 'acc_2', period: '2026-01', day: '2026-01-15', used: 1, dropped: 0 }] },
      { ...part(['c']), usage: [{ accountId: 'acc_1', period: '2026-01', day: '2026-01-15', used: 3, dropped: 1 }] },
    ]);
    expect(merged.events.map((e) => e.id)).toEqual(['a', 'b', 'c']);
    expect(merged.usage.map((u) => u.used)).toEqual([1, 1, 3]);
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    await store.commit(merged);
    expect(await store.stats.getUsage('acc_1', '2026-01')).toMatchObject({ used: 4, dropped: 3 });
    expect(await store.stats.getUsage('acc_2', '2026-01')).toMatchObject({ used: 1, dropped: 0 });
    await store.close();
  });

  it('on real SQLite: a group whose one part violates a constraint stores the others', async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    await store.accounts.createAccount({ id: 'acc_1', name: 'a', plan: 'pro', createdAt: 0 });
    await store.commit(part(['dup']));
    const group = new CommitGroup(store, { windowMs: 0, maxEvents: 1000 });
    const results = await Promise.all([settled(group.add(part(['n1']))), settled(group.add(part(['dup']))), settled(group.add(part(['n2', 'n3'])))]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(await store.events.countEvents('acc_1')).toBe(4);
    // The failed group transaction left nothing behind: usage counts exactly the stored parts.
    expect((await store.stats.getUsage('acc_1', '2026-01')).used).toBe(4);
    await store.close();
  });

  it('with maxInFlight, several groups commit at once and flush waits for all of them', async () => {
    const store = new RecordingStore();
    let open!: () => void;
    store.gate = new Promise<void>((resolve) => (open = resolve));
    const group = new CommitGroup(store.asStore(), { windowMs: 0, maxEvents: 1000, maxInFlight: 2 });
    const first = group.add(part(['a']));
    await new Promise((r) => setImmediate(r));
    const second = group.add(part(['b']));
    await new Promise((r) => setImmediate(r));
    const third = group.add(part(['c']));
    await new Promise((r) => setImmediate(r));
    // Two transactions are running; the third part waits for one of them to finish.
    expect(store.commits.map((c) => c.events.map((e) => e.id))).toEqual([['a'], ['b']]);
    let flushed = false;
    const flushing = group.flush().then(() => (flushed = true));
    await new Promise((r) => setImmediate(r));
    expect(flushed).toBe(false);
    open();
    await Promise.all([first, second, third, flushing]);
    expect(store.commits.map((c) => c.events.map((e) => e.id))).toEqual([['a'], ['b'], ['c']]);
  });

  it('on a SQLite file (writer thread): parts committed at once through groups in flight together, and a bad one fails alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vigil-commit-'));
    const store = openSqliteStore({ dataDir: dir, synchronous: 'full' });
    await store.migrate();
    await store.accounts.createAccount({ id: 'acc_1', name: 'a', plan: 'pro', createdAt: 0 });
    await store.commit(part(['dup']));
    // Several groups in flight at once, so that they queue at the writer thread.
    const group = new CommitGroup(store, { windowMs: 0, maxEvents: 4, maxInFlight: 16 });
    const ids = Array.from({ length: 40 }, (_, i) => `e${i}`);
    // Added back to back: groups of 4 reach the writer thread while others run, and it writes
    // what is queued in one transaction.
    const results = await Promise.all(ids.map((id, i) => settled(group.add(part(i === 17 ? ['dup'] : [id])))));
    expect(results[17]).toEqual({ ok: false, error: expect.any(StoreRejectedError) });
    expect(results.filter((r) => !r.ok)).toHaveLength(1);
    expect(results[17]?.ok).toBe(false);
    expect(await store.events.countEvents('acc_1')).toBe(40);
    expect((await store.stats.getUsage('acc_1', '2026-01')).used).toBe(40);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
