import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../../src/storage/schema.js';
import { openSqliteStore, SqliteStore } from '../../src/storage/sqlite.js';
import { ThreadSqliteWriter } from '../../src/storage/sqlite-writer.js';
import { planCommit } from '../../src/storage/commit-plan.js';
import { StoreRejectedError, StoreUnavailableError } from '../../src/storage/store.js';
import type { CommitBatch } from '../../src/storage/types.js';
import { oneEventBatch } from './one-event-batch.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-writer-'));
  dirs.push(dir);
  return dir;
}

/** A migrated store on a database file, its commits on the writer thread. */
async function migratedStore(): Promise<SqliteStore> {
  const store = openSqliteStore({ dataDir: tempDir(), synchronous: 'full' });
  await store.migrate();
  return store;
}

const batch = (accountId: string, id: string): CommitBatch => oneEventBatch(accountId, id);

test('a writer thread that cannot open its database fails the commit, and the next commit starts a new thread', async () => {
  const dir = tempDir();
  const dataDir = join(dir, 'later');
  const writer = new ThreadSqliteWriter({ file: join(dataDir, 'vigil.db'), synchronous: 'full' });
  const failed = await writer.write(planCommit(batch('acc_1', 'evt_1')), false).then(
    () => 'committed',
    (err: { code?: string }) => err.code,
  );
  expect(failed).toBe('SQLITE_WRITER_FAILED');

  mkdirSync(dataDir);
  const store = openSqliteStore({ dataDir, synchronous: 'full' });
  await store.migrate();
  const account = await store.accounts.createAccount({ id: 'acc_1', name: 'a', plan: 'free', createdAt: 1 });
  await writer.write(planCommit(batch(account.id, 'evt_2')), false);
  await writer.close();
  expect((await store.events.getEvent(account.id, 'evt_2'))?.id).toBe('evt_2');
  await store.close();
});

test('the store turns a failed writer thread into StoreUnavailableError (a 503, never a 202)', async () => {
  const dir = tempDir();
  const database = new SqliteDatabase(':memory:');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  const store = new SqliteStore(db, new ThreadSqliteWriter({ file: join(dir, 'missing', 'vigil.db'), synchronous: 'full' }), database);
  await expect(store.commit(batch('acc_1', 'evt_1'))).rejects.toBeInstanceOf(StoreUnavailableError);
  await store.close();
});

test('a commit sent alone is written in a transaction of its own, whatever is queued with it', async () => {
  const store = await migratedStore();
  const account = await store.accounts.createAccount({ id: 'acc_1', name: 'a', plan: 'pro', createdAt: 1 });
  await store.commit(batch(account.id, 'dup'));
  const ids = Array.from({ length: 20 }, (_, i) => (i === 7 ? 'dup' : `evt_${i}`));
  const results = await Promise.all(
    ids.map((id) =>
      store.commit(batch(account.id, id), { alone: true }).then(
        () => 'stored',
        (err: unknown) => (err instanceof StoreRejectedError ? 'rejected' : String(err)),
      ),
    ),
  );
  expect(results.filter((r) => r === 'rejected')).toHaveLength(1);
  expect(results[7]).toBe('rejected');
  expect(await store.events.countEvents(account.id)).toBe(20);
  await store.close();
});

test('the commits queued into one transaction add up their usage, per account and period', async () => {
  const store = await migratedStore();
  const a = await store.accounts.createAccount({ id: 'acc_1', name: 'a', plan: 'pro', createdAt: 1 });
  const b = await store.accounts.createAccount({ id: 'acc_2', name: 'b', plan: 'pro', createdAt: 1 });
  const dropping = (accountId: string, id: string): CommitBatch => ({
    ...batch(accountId, id),
    usage: [{ accountId, period: '2026-11', day: '2026-11-26', used: 1, dropped: 2 }],
  });
  // Sent together, the writer thread finds them queued and writes them in one transaction.
  await Promise.all([
    ...Array.from({ length: 30 }, (_, i) => store.commit(batch(a.id, `evt_a${i}`))),
    ...Array.from({ length: 12 }, (_, i) => store.commit(dropping(b.id, `evt_b${i}`))),
  ]);
  expect(await store.stats.getUsage(a.id, '2026-11')).toMatchObject({ used: 30, dropped: 0 });
  expect(await store.stats.getUsage(b.id, '2026-11')).toMatchObject({ used: 12, dropped: 24 });
  expect(await store.events.countEvents(a.id)).toBe(30);
  await store.close();
});
