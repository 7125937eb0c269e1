import type Database from 'better-sqlite3';

export type SqliteSynchronous = 'full' | 'normal';

/**
 * Every connection to the database file, the request thread's and the writer thread's: WAL lets
 * readers run beside the writer; `synchronous=FULL` makes a commit durable against power loss.
 */
export function configureSqlite(database: Database.Database, synchronous: SqliteSynchronous): void {
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  database.pragma('busy_timeout = 5000');
  database.pragma('temp_store = MEMORY');
}
