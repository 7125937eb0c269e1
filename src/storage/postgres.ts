import { Kysely, PostgresDialect, sql, type DatabaseIntrospector } from 'kysely';
import pg from 'pg';
import { systemClock, type Clock } from '../util/clock.js';
import { translate } from './kysely/access.js';
import { KyselyBackend } from './kysely/backend.js';
import { runMigrations } from './kysely/migrate.js';
import { PostgresEventStore } from './postgres-events.js';
import { KyselyEntityStore } from './kysely/entities.js';
import { ensureMonthPartitions, listMonthPartitions, partitionsFor, type MonthPartition } from './postgres-partitions.js';
import { planCommit } from './commit-plan.js';
import { writeCommitPlan } from './postgres-commit.js';
import { isLostConnection } from './errors.js';
import type { Database } from './schema.js';
import type { CommitBatch } from './types.js';
import { StoreRejectedError, StoreUnavailableError, type EntityStore, type EventStore, type Store } from './store.js';

export interface PostgresOptions {
  /**
   * Schema for every Vigil table (created when missing); connections get it as their
   * search_path. Also read from the URL as `?schema=name`. Default: the server's current
   * schema for the URL's user (usually `public`).
   */
  readonly schema?: string;
  /** Connections per instance (default 10). Instances x poolSize must stay under max_connections. */
  readonly poolSize?: number;
  /** Give up opening a connection after this long (default 5000 ms): an unreachable server answers 503, not a hang. */
  readonly connectTimeoutMs?: number;
  /** Server-side cap per statement (default 30000 ms; 0 disables). */
  readonly statementTimeoutMs?: number;
  /** Shown in pg_stat_activity (default `vigil`). */
  readonly applicationName?: string;
  /** Month partitions kept ready beyond the current month (default 2). */
  readonly monthsAhead?: number;
  /** Time for the partition upkeep done by migrate(). */
  readonly clock?: Clock;
  /** Told about errors on pooled connections (server restart, terminated backend); the pool replaces them. */
  readonly onConnectionError?: (err: Error) => void;
  /** Told about every statement run (e.g. to log slow queries). */
  readonly onQuery?: (query: { sql: string; parameters: readonly unknown[]; durationMs: number; error?: unknown }) => void;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const INT8_OID = 20;

/**
 * pg returns bigint columns as strings (they may exceed 2^53). Ours hold ms timestamps and
 * counters, far below that, so this pool parses them as numbers and Store types stay exact.
 */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * The scale-out Store: the same Kysely aggregate stores over a pg Pool. The pool replaces dead
 * connections by itself, so after a server restart or failover the store recovers with no
 * restart of Vigil; until then calls throw StoreUnavailableError (503).
 */
export class PostgresStore extends KyselyBackend implements Store {
  readonly kind = 'postgres';
  readonly events: EventStore;
  readonly entities: EntityStore;
  private resolvedSchema: string | undefined;

  constructor(
    db: Kysely<Database>,
    private readonly settings: { schema?: string; monthsAhead: number; clock: Clock; poolSize: number },
  ) {
    super(db, 'postgres', { staleConnectionAttempts: settings.poolSize + 1 });
    this.events = new PostgresEventStore(this.x, () => this.schema());
    this.entities = new KyselyEntityStore(this.x);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  /** The schema the tables live in. */
  async schema(): Promise<string> {
    if (this.resolvedSchema === undefined) {
      if (this.settings.schema !== undefined) {
        const name = this.settings.schema;
        // Instances starting together race here; `if not exists` can still fail on the catalogue's
        // unique index, and then the schema exists, which is all we need.
        await this.x
          .guard('createSchema', () => sql`create schema if not exists ${sql.id(name)}`.execute(this.db))
          .catch((err: unknown) => {
            if (!(err instanceof StoreRejectedError)) throw err;
          });
        this.resolvedSchema = name;
      } else {
        const { rows } = await this.x.read('currentSchema', () => sql<{ name: string | null }>`select current_schema() as name`.execute(this.db));
        const name = rows[0]?.name;
        if (!name) throw new StoreUnavailableError('PostgreSQL has no current schema for this user: set a schema or search_path');
        this.resolvedSchema = name;
      }
    }
    return this.resolvedSchema;
  }

  async migrate(): Promise<void> {
    const schema = await this.schema();
    await this.x.guard('migrate', () => runMigrations(this.migrationDb(schema), schema));
    await this.maintain(this.settings.clock.now());
  }

  /**
   * Kysely's migrator asks its introspector whether its tables exist, and the PostgreSQL
   * introspector reads the columns of every table in every schema: slow in a shared database
   * and failing when another schema is dropped meanwhile. This one looks in our schema only.
   */
  private migrationDb(schema: string): Kysely<Database> {
    const db = this.db;
    const introspection: DatabaseIntrospector = {
      getSchemas: async () => {
        const { rows } = await sql<{ name: string }>`select nspname as name from pg_namespace where nspname = ${schema}`.execute(db);
        return rows;
      },
      getTables: async () => {
        const { rows } = await sql<{ name: string; schema: string }>`
          select c.relname as name, n.nspname as schema from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = coalesce(${schema}, current_schema()) and c.relkind in ('r', 'p', 'v')`.execute(db);
        return rows.map((r) => ({ name: r.name, schema: r.schema, isView: false, columns: [] }));
      },
      getMetadata: async () => ({ tables: await introspection.getTables() }),
    };
    return new Proxy(db, {
      get(target, prop) {
        if (prop === 'introspection') return introspection;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  async maintain(now: number): Promise<void> {
    const schema = await this.schema();
    await this.x.guard('maintain', () => ensureMonthPartitions(this.db as unknown as Kysely<unknown>, schema, partitionsFor(now, this.settings.monthsAhead)));
  }

  /** The month partitions of the events table, oldest first. */
  async eventPartitions(): Promise<MonthPartition[]> {
    const schema = await this.schema();
    return this.x.read('eventPartitions', () => listMonthPartitions(this.db as unknown as Kysely<unknown>, schema));
  }

  async commit(batch: CommitBatch): Promise<void> {
    const plan = planCommit(batch);
    for (let attempt = 1; ; attempt++) {
      let begun = false;
      try {
        await this.db.transaction().execute((trx) => {
          begun = true;
          return writeCommitPlan(trx, plan);
        });
        return;
      } catch (err) {
        // Only a connection that died before BEGIN (stale in the pool) is retried: a session lost
        // mid-transaction is a real outage, and one lost during COMMIT may have committed.
        if (begun || attempt >= this.x.attempts || !isLostConnection(err)) throw translate('commit', err);
      }
    }
  }
}

/**
 * Where and how to connect. `schema` may come from the options or from the URL
 * (`?schema=vigil`, a Vigil parameter stripped before pg sees the URL). Vigil's session
 * settings are appended to any `options` the URL carries, since pg lets the URL's value
 * replace the one in the config.
 */
export function connectionSettings(url: string, options: PostgresOptions): { connectionString: string; startup?: string; schema?: string } {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const schema = options.schema ?? parsed?.searchParams.get('schema') ?? undefined;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name "${schema}": use lower-case letters, digits and _`);
  }
  const statementTimeout = options.statementTimeoutMs ?? 30_000;
  const ours = [schema !== undefined ? `-c search_path=${schema}` : '', statementTimeout > 0 ? `-c statement_timeout=${statementTimeout}` : ''];
  if (!parsed) return { connectionString: url, startup: ours.filter(Boolean).join(' '), ...(schema !== undefined ? { schema } : {}) };
  parsed.searchParams.delete('schema');
  const startup = [parsed.searchParams.get('options') ?? '', ...ours].filter(Boolean).join(' ');
  if (startup) parsed.searchParams.set('options', startup);
  return { connectionString: parsed.toString(), ...(schema !== undefined ? { schema } : {}) };
}

/** Opens (lazily: no connection until the first call) a Store on PostgreSQL. Call migrate() before use. */
export function openPostgresStore(url: string, options: PostgresOptions = {}): PostgresStore {
  const { connectionString, startup, schema } = connectionSettings(url, options);
  const poolSize = options.poolSize ?? 10;
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: options.applicationName ?? 'vigil',
    types,
    ...(startup ? { options: startup } : {}),
  });
  const report = options.onConnectionError ?? (() => {});
  // An error on an idle connection is emitted by the pool, one on a checked-out connection
  // between statements by the client; unheard, either would crash the process.
  pool.on('error', report);
  pool.on('connect', (client) => client.on('error', report));
  const onQuery = options.onQuery;
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    ...(onQuery
      ? {
          log: (event) =>
            onQuery({
              sql: event.query.sql,
              parameters: event.query.parameters,
              durationMs: event.queryDurationMillis,
              ...(event.level === 'error' ? { error: event.error } : {}),
            }),
        }
      : {}),
  });
  return new PostgresStore(db, {
    ...(schema !== undefined ? { schema } : {}),
    monthsAhead: options.monthsAhead ?? 2,
    clock: options.clock ?? systemClock,
    poolSize,
  });
}
