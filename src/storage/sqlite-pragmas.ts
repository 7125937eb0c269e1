import type Database from 'better-sqlite3';

export type SqliteSynchronous = 'full' | 'normal';

/**
 * Every connection to the database file: the request thread's, the writer thread's and the
 * checkpoint thread's. WAL lets readers run beside the writer; `synchronous=FULL` makes a commit
 * durable against power loss. No connection checkpoints on its own (`wal_autocheckpoint=0`):
 * SQLite would run the checkpoint inside the commit that crossed the threshold, so every commit
 * queued behind it would wait for the copy into the database file and its fsync. The checkpoint
 * thread (sqlite-checkpoint-thread.ts) does it beside the writer instead. `journal_size_limit`
 * gives the WAL file back to the disk down to that size whenever it starts over.
 * `secure_delete=ON` makes SQLite overwrite with zeros whatever a write leaves unused: a deleted
 * row, a row's old version, the cells a page split or merge moves to another page, a page put on
 * the freelist. A data subject's erasure depends on it on every connection: a copy of an erased
 * value that an earlier insert's page split left behind in a page's free space would outlive the
 * erasure's own deletes (docs/guides/privacy.md, "How irreversibly").
 */
export function configureSqlite(database: Database.Database, synchronous: SqliteSynchronous): void {
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  database.pragma('busy_timeout = 5000');
  database.pragma('temp_store = MEMORY');
  database.pragma('secure_delete = ON');
  database.pragma('wal_autocheckpoint = 0');
  database.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

/**
 * The WAL file is truncated to this size when it starts over (bytes): twice what the checkpoint
 * thread lets it reach before it starts it over, so that in steady state the WAL reuses its file
 * and a commit's fsync never has to record a new file size.
 */
export const WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024;
