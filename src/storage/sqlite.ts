import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { KyselyStore, translate } from './kysely-store.js';
import type { CommitOptions } from './store.js';
import type { Database } from './schema.js';
import { configureSqlite, type SqliteSynchronous } from './sqlite-pragmas.js';
import { InlineSqliteWriter, ThreadSqliteWriter, type SqliteCommitWriter } from './sqlite-writer.js';
import { toSqliteWrites } from './sqlite-writes.js';
import type { CommitBatch, IdempotencyRow } from './types.js';

const FIND_IDEMPOTENCY =
  'select account_id, event_id, response, created_at, payload_digest from idempotency where account_id = ? and event_id = ? and created_at >= ?';

interface IdempotencyColumns {
  readonly account_id: string;
  readonly event_id: string;
  readonly response: string;
  readonly created_at: number;
  readonly payload_digest: string | null;
}

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
export class SqliteStore extends KyselyStore {
  /** Prepared on first use (the table exists only after migrate()). */
  private findIdempotencyStatement: SqliteDatabase.Statement<unknown[], IdempotencyColumns> | undefined;

  constructor(
    db: Kysely<Database>,
    private readonly writer: SqliteCommitWriter,
    private readonly database: SqliteDatabase.Database,
  ) {
    super('sqlite', db);
  }

  get concurrentCommits(): number {
    return this.writer.coalesces ? 16 : 1;
  }

  /**
   * The ingestion hot path asks this for every event carrying an event_id: a statement prepared
   * once costs a few µs, where building, compiling and preparing the query through Kysely cost
   * several times the lookup itself.
   */
  override async findIdempotency(accountId: string, eventId: string, since: number): Promise<IdempotencyRow | undefined> {
    let row: IdempotencyColumns | undefined;
    try {
      this.findIdempotencyStatement ??= this.database.prepare<unknown[], IdempotencyColumns>(FIND_IDEMPOTENCY);
      row = this.findIdempotencyStatement.get(accountId, eventId, since);
    } catch (err) {
      throw translate('findIdempotency', err);
    }
    return (
      row && {
        accountId: row.account_id,
        eventId: row.event_id,
        response: JSON.parse(row.response) as IdempotencyRow['response'],
        createdAt: row.created_at,
        payloadDigest: row.payload_digest,
      }
    );
  }

  override async commit(batch: CommitBatch, options: CommitOptions = {}): Promise<void> {
    try {
      await this.writer.write(toSqliteWrites(batch), options.alone ?? false);
    } catch (err) {
      throw translate('commit', err);
    }
  }

  override async close(): Promise<void> {
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
