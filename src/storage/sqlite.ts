import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { translate } from './kysely/access.js';
import { KyselyBackend } from './kysely/backend.js';
import { runMigrations } from './kysely/migrate.js';
import type { Database } from './schema.js';
import { SqliteEventStore } from './sqlite-events.js';
import { SqliteEntityStore } from './sqlite-entities.js';
import { configureSqlite, type SqliteSynchronous } from './sqlite-pragmas.js';
import { InlineSqliteWriter, ThreadSqliteWriter, type SqliteCommitWriter } from './sqlite-writer.js';
import { planCommit } from './commit-plan.js';
import type { CommitOptions, EntityStore, EventStore, Store } from './store.js';
import type { CommitBatch } from './types.js';

export interface SqliteOptions {
  /** A directory (the file is `vigil.db` inside) or `:memory:`. */
  readonly dataDir: string;
  readonly synchronous: SqliteSynchronous;
}

/**
 * The embedded default. Reads, migrations and administrative writes go through Kysely on the
 * request thread; commit groups (the ingestion writes) go to a SqliteCommitWriter, which for a
 * database file is a writer thread with its own connection.
 */
export class SqliteStore extends KyselyBackend implements Store {
  readonly kind = 'sqlite';
  readonly events: EventStore;
  readonly entities: EntityStore;

  constructor(
    db: Kysely<Database>,
    private readonly writer: SqliteCommitWriter,
    database: SqliteDatabase.Database,
  ) {
    super(db, 'sqlite');
    this.events = new SqliteEventStore(this.x, database);
    this.entities = new SqliteEntityStore(this.x);
  }

  get coalescesCommits(): boolean {
    return this.writer.coalesces;
  }

  async migrate(): Promise<void> {
    await this.x.guard('migrate', () => runMigrations(this.db));
  }

  async maintain(now: number): Promise<void> {
    void now;
  }

  async commit(batch: CommitBatch, options: CommitOptions = {}): Promise<void> {
    try {
      await this.writer.write(planCommit(batch), options.alone ?? false);
    } catch (err) {
      throw translate('commit', err);
    }
  }

  async close(): Promise<void> {
    // The writer first: its last commits must land before the file is let go.
    await this.writer.close();
    await this.db.destroy();
  }
}

export function openSqliteStore(options: SqliteOptions): SqliteStore {
  let file = ':memory:';
  if (options.dataDir !== ':memory:') {
    mkdirSync(options.dataDir, { recursive: true });
    file = join(options.dataDir, 'vigil.db');
  }
  const database = new SqliteDatabase(file);
  configureSqlite(database, options.synchronous);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  const writer = file === ':memory:' ? new InlineSqliteWriter(database) : new ThreadSqliteWriter({ file, synchronous: options.synchronous });
  return new SqliteStore(db, writer, database);
}
