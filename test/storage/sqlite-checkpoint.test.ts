import { existsSync, mkdirSync, mkdtempSync, openSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test, vi } from 'vitest';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../../src/storage/schema.js';
import { configureSqlite } from '../../src/storage/sqlite-pragmas.js';
import { SqliteStore } from '../../src/storage/sqlite.js';
import { ThreadSqliteWriter } from '../../src/storage/sqlite-writer.js';
import type { CommitBatch } from '../../src/storage/types.js';
import { oneEventBatch } from './one-event-batch.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const batch = (accountId: string, id: string): CommitBatch => oneEventBatch(accountId, id, { actorId: `u_${id}`, padding: 2000 });

/** The WAL header's checkpoint sequence number (WAL file format, bytes 12–15): it moves each time the WAL starts over. */
function walSequence(file: string): number {
  const fd = openSync(`${file}-wal`, 'r');
  try {
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

/** Commits one event at a time until the WAL's sequence differs from `sequence`; answers how many were committed. */
async function commitUntilWalStartsOver(store: SqliteStore, accountId: string, file: string, sequence: number, idPrefix: string): Promise<number> {
  let n = 0;
  await vi.waitFor(
    async () => {
      await store.commit(batch(accountId, `${idPrefix}${n++}`));
      expect(walSequence(file)).not.toBe(sequence);
    },
    { timeout: 20_000, interval: 20 },
  );
  return n;
}

test('commits go on while a reader keeps checkpoints from finishing; once it lets go the WAL starts over, and closing empties it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-checkpoint-'));
  dirs.push(dir);
  const file = join(dir, 'vigil.db');
  const database = new SqliteDatabase(file);
  configureSqlite(database, 'full');
  const store = new SqliteStore(
    new Kysely<Database>({ dialect: new SqliteDialect({ database }) }),
    new ThreadSqliteWriter({ file, synchronous: 'full', checkpointIntervalMs: 5 }),
    database,
  );
  await store.migrate();
  const account = await store.accounts.createAccount({ id: 'acc_1', name: 'a', plan: 'pro', createdAt: 1 });
  await store.commit(batch(account.id, 'evt_first'));

  // A read transaction on a connection of its own pins the WAL: no checkpoint can copy past its
  // snapshot, and the WAL cannot start over while it reads.
  const reader = new SqliteDatabase(file);
  reader.exec('BEGIN');
  expect(reader.prepare('select count(*) as n from events').get()).toEqual({ n: 1 });
  // The first commit may still start the WAL over, if every frame was copied before the read
  // began (the reader then reads the database file alone); none after it can.
  await store.commit(batch(account.id, 'evt_0'));
  const pinned = walSequence(file);
  for (let i = 1; i < 100; i++) await store.commit(batch(account.id, `evt_${i}`));
  expect(await store.events.countEvents(account.id)).toBe(101);
  // Nothing copied the WAL's frames over the pinned snapshot's pages.
  expect(reader.prepare('select count(*) as n from events').get()).toEqual({ n: 1 });
  expect(walSequence(file)).toBe(pinned);
  expect(statSync(`${file}-wal`).size).toBeGreaterThan(100 * 4096);

  // Let go: the checkpoint thread copies the WAL and a later commit starts it over, overwriting
  // it from the beginning instead of growing it.
  reader.exec('COMMIT');
  let n = await commitUntilWalStartsOver(store, account.id, file, pinned, 'evt_after_');
  const restarted = statSync(`${file}-wal`).size;
  for (let i = 0; i < 20; i++) await store.commit(batch(account.id, `evt_after_${n++}`));
  expect(statSync(`${file}-wal`).size).toBe(restarted);
  reader.close();

  await store.close();
  // The last checkpoint emptied the WAL (or the last connection removed it).
  expect(existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0).toBe(0);
  const check = new SqliteDatabase(file, { readonly: true });
  expect(check.prepare('select count(*) as n from events').get()).toEqual({ n: 101 + n });
  check.close();
});

test('a checkpoint thread that fails is reported and started again; the commits are all kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-checkpoint-'));
  dirs.push(dir);
  const dataDir = join(dir, 'later');
  const file = join(dataDir, 'vigil.db');
  const warnings: string[] = [];
  const onWarning = (warning: Error & { code?: string }) => {
    if (warning.code === 'SQLITE_CHECKPOINT_RESTARTED') warnings.push(warning.message);
  };
  process.on('warning', onWarning);
  try {
    // Neither thread can open a database in a folder that does not exist yet.
    const writer = new ThreadSqliteWriter({ file, synchronous: 'full', checkpointIntervalMs: 5 });
    const database = new SqliteDatabase(':memory:');
    const store = new SqliteStore(new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), writer, database);
    await expect(store.commit(batch('acc_1', 'evt_lost'))).rejects.toThrow();
    await vi.waitFor(() => expect(warnings.length).toBeGreaterThan(0), { timeout: 10_000 });

    mkdirSync(dataDir);
    const setup = new SqliteDatabase(file);
    configureSqlite(setup, 'full');
    const migrated = new SqliteStore(new Kysely<Database>({ dialect: new SqliteDialect({ database: setup }) }), writer, setup);
    await migrated.migrate();
    const account = await migrated.accounts.createAccount({ id: 'acc_1', name: 'a', plan: 'pro', createdAt: 1 });
    await migrated.commit(batch(account.id, 'evt_first'));
    const first = walSequence(file);
    // Only a checkpoint thread started again can let the WAL start over.
    const n = await commitUntilWalStartsOver(migrated, account.id, file, first, 'evt_');
    await migrated.close();
    database.close();
    const check = new SqliteDatabase(file, { readonly: true });
    expect(check.prepare('select count(*) as n from events').get()).toEqual({ n: 1 + n });
    check.close();
  } finally {
    process.off('warning', onWarning);
  }
});
