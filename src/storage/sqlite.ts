import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { KyselyStore } from './kysely-store.js';
import type { Database } from './schema.js';

export interface SqliteOptions {
  /** A directory (the file is `vigil.db` inside) or `:memory:`. */
  readonly dataDir: string;
  readonly synchronous: 'full' | 'normal';
}

/**
 * The embedded default. WAL lets readers run beside the writer; `synchronous=FULL` makes a
 * commit durable against power loss, and group commit pays that fsync once per group.
 */
export function openSqliteStore(options: SqliteOptions): KyselyStore {
  let file = ':memory:';
  if (options.dataDir !== ':memory:') {
    mkdirSync(options.dataDir, { recursive: true });
    file = join(options.dataDir, 'vigil.db');
  }
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  database.pragma(`synchronous = ${options.synchronous.toUpperCase()}`);
  database.pragma('busy_timeout = 5000');
  database.pragma('temp_store = MEMORY');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return new KyselyStore('sqlite', db);
}
