import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import type { ValidatedEvent } from '../../src/event/types.js';
import { PseudonymKeys } from '../../src/privacy/pseudonym.js';
import { SuppressionList, suppressionEntries, type Suppressions } from '../../src/privacy/suppression.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import { ManualClock } from '../../src/util/clock.js';

const MASTER = 'test-suppression-master-secret-0123456789';
const keys = new PseudonymKeys(MASTER);

const event = (fields: Partial<ValidatedEvent>): ValidatedEvent => ({ metadata: {}, ...fields }) as ValidatedEvent;

/** A real SQLite store whose suppression reads are counted. */
async function countingStore() {
  const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  await store.migrate();
  const reads: string[] = [];
  const subjects = {
    listSuppressions: (accountId: string, now: number) => (reads.push(accountId), store.subjects.listSuppressions(accountId, now)),
  };
  return { store, reads, subjects };
}

async function suppress(store: Awaited<ReturnType<typeof countingStore>>['store'], accountId: string, values: string[], until: number) {
  const entries = suppressionEntries(
    keys,
    accountId,
    values.map((value) => ({ kind: 'actor_id' as const, value })),
  ) as { hash: string; kind: string }[];
  await store.subjects.addSuppressions(accountId, entries, until, 0);
}

describe('SuppressionList', () => {
  it('loads an account once, honours each row’s end, and loads again after a change', async () => {
    const { store, reads, subjects } = await countingStore();
    const clock = new ManualClock(1_000);
    const list = new SuppressionList(subjects, new MemoryStateStore({ clock }), keys);
    await suppress(store, 'acc_a', ['dana'], 5_000);
    const first = (await list.inForce('acc_a', clock.now())) as Suppressions;
    expect(first.suppresses(event({ actorId: 'dana' }), clock.now())).toBe(true);
    expect(first.suppresses(event({ actorId: 'erin' }), clock.now())).toBe(false);
    // Current: answered at once, from memory.
    const again = list.inForce('acc_a', clock.now());
    expect(again).toBe(first);
    expect(reads).toEqual(['acc_a']);
    // Expiry needs no reload.
    expect(first.suppresses(event({ actorId: 'dana' }), 5_000)).toBe(false);

    await suppress(store, 'acc_a', ['erin'], 9_000);
    await list.changed('acc_a');
    const changed = (await list.inForce('acc_a', clock.now())) as Suppressions;
    expect(changed.suppresses(event({ actorId: 'erin' }), clock.now())).toBe(true);
    expect(reads).toEqual(['acc_a', 'acc_a']);
    await store.close();
  });

  it('keeps at most maxCachedHashes over every account, dropping the least recently used account first', async () => {
    const { store, reads, subjects } = await countingStore();
    const list = new SuppressionList(subjects, new MemoryStateStore(), keys, { maxCachedHashes: 4 });
    for (const account of ['acc_a', 'acc_b', 'acc_c']) await suppress(store, account, ['one', 'two'], Number.MAX_SAFE_INTEGER);
    await list.inForce('acc_a', 0);
    await list.inForce('acc_b', 0);
    // acc_b is now the least recently used.
    expect(list.inForce('acc_a', 0)).not.toBeInstanceOf(Promise);
    await list.inForce('acc_c', 0); // six hashes: acc_b goes
    expect(list.inForce('acc_a', 0)).not.toBeInstanceOf(Promise);
    expect(list.inForce('acc_c', 0)).not.toBeInstanceOf(Promise);
    const reloaded = list.inForce('acc_b', 0);
    expect(reloaded).toBeInstanceOf(Promise);
    await reloaded;
    expect(reads).toEqual(['acc_a', 'acc_b', 'acc_c', 'acc_b']);
    await store.close();
  });

  it('reads nothing without a master secret: no hash can be made, so nothing is suppressed', async () => {
    const { store, reads, subjects } = await countingStore();
    const list = new SuppressionList(subjects, new MemoryStateStore(), new PseudonymKeys(undefined));
    expect((list.inForce('acc_a', 0) as Suppressions).empty).toBe(true);
    expect(list.entriesOf('acc_a', [{ kind: 'email', value: 'd@example.org' }])).toBeUndefined();
    expect(reads).toEqual([]);
    await store.close();
  });
});
