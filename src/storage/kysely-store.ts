import { Migrator, sql, type Kysely, type RawBuilder } from 'kysely';
import { isRejectedData, isLostConnection } from './errors.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';
import { alertRowOf } from './webhooks/outbox.js';
import { setStatusWithOutbox, WebhookStore } from './webhooks/store.js';
import { StoreRejectedError, StoreUnavailableError, type CommitOptions, type NewKey, type Store } from './store.js';
import type {
  AlertFilter,
  AlertNote,
  AlertRow,
  AlertStatus,
  ApiKeyRecord,
  CommitBatch,
  DashboardSession,
  EventFilter,
  EventRow,
  IdempotencyRow,
  Overview,
  Page,
  ThreatModelRow,
  ThreatModelVersionRow,
  UsageRow,
} from './types.js';
import type { Account, KeyKind } from '../event/account.js';

type Row<T extends keyof Database> = Database[T];

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const parseJson = <T>(text: string): T => JSON.parse(text) as T;

/** Event ids per idempotency query: a batch's ids fit in one, far below any parameter limit. */
const IDEMPOTENCY_LOOKUP_CHUNK = 1_000;

function toAccount(row: Row<'accounts'>): Account {
  return { id: row.id, name: row.name, plan: row.plan, createdAt: num(row.created_at), settings: parseJson(row.settings) };
}

function toKey(row: Row<'api_keys'>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as KeyKind,
    prefix: row.prefix,
    allowedOrigins: parseJson(row.allowed_origins),
    createdAt: num(row.created_at),
    revokedAt: row.revoked_at === null ? null : num(row.revoked_at),
  };
}

function toEvent(row: Row<'events'>): EventRow {
  return {
    id: row.id,
    accountId: row.account_id,
    type: row.type,
    eventId: row.event_id,
    occurredAt: num(row.occurred_at),
    receivedAt: num(row.received_at),
    actorId: row.actor_id,
    ip: row.ip,
    riskScore: num(row.risk_score),
    tags: parseJson(row.tags),
    doc: parseJson(row.doc),
  };
}

/** PostgreSQL answers bigint columns as text, SQLite as numbers. */
export function toIdempotency(row: Row<'idempotency'>): IdempotencyRow {
  return {
    accountId: row.account_id,
    eventId: row.event_id,
    response: parseJson(row.response),
    createdAt: num(row.created_at),
    payloadDigest: row.payload_digest,
  };
}

function toThreatModel(row: Row<'threat_models'>): ThreatModelRow {
  return {
    id: row.id,
    accountId: row.account_id,
    version: num(row.version),
    enabled: num(row.enabled) === 1,
    definition: parseJson(row.definition),
    source: parseJson(row.source),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    suspendedAt: row.suspended_at === null ? null : num(row.suspended_at),
    suspendedReason: row.suspended_reason,
  };
}

/** Escapes LIKE wildcards so user filters match literally. */
const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export interface KyselyStoreOptions {
  /**
   * Attempts for an operation whose pooled connection turned out dead (server restart,
   * failover, pg_terminate_backend while idle) and that certainly wrote nothing: reads, and
   * commits that failed before their transaction began. Every idle connection of the pool
   * may be dead at once, so a pool wants its size + 1. Default 1 (no retry).
   */
  readonly staleConnectionAttempts?: number;
}

/** Turns a database failure into the Store contract's errors. */
export function translate(what: string, err: unknown): Error {
  if (err instanceof StoreUnavailableError || err instanceof StoreRejectedError) return err;
  const message = `${what} failed: ${(err as Error | undefined)?.message ?? String(err)}`;
  if (isRejectedData(err)) return new StoreRejectedError(message, { cause: err });
  return new StoreUnavailableError(message, { cause: err });
}

/**
 * The Store over Kysely. The SQL is portable: SQLite and PostgreSQL differ in the dialect,
 * in the events table's physical layout (partitioned on PostgreSQL, see postgres.ts) and in
 * the tag filter, which PostgreSQL answers from a GIN index.
 */
export abstract class KyselyStore implements Store {
  readonly webhooks: WebhookStore;

  constructor(
    readonly kind: 'sqlite' | 'postgres',
    protected readonly db: Kysely<Database>,
    private readonly onClose: () => Promise<void> = async () => {},
    private readonly options: KyselyStoreOptions = {},
  ) {
    this.webhooks = new WebhookStore(db, kind === 'postgres');
  }

  /** Runs a write, turning database failures into StoreUnavailableError / StoreRejectedError. */
  protected async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translate(what, err);
    }
  }

  /**
   * True when no stored row can hold one of these lookup values, so the answer is "not found"
   * without asking (PostgreSQL would refuse the parameter itself). SQLite can hold any text.
   */
  protected unmatchable(...values: (string | undefined)[]): boolean {
    void values;
    return false;
  }

  /** Runs a read; a read is safe to repeat, so a dead pooled connection costs a retry, not an error. */
  protected async read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= this.attempts || !isLostConnection(err)) throw translate(what, err);
      }
    }
  }

  protected get attempts(): number {
    return this.options.staleConnectionAttempts ?? 1;
  }

  async migrate(): Promise<void> {
    await this.guard('migrate', () => this.runMigrations());
  }

  /** The Kysely instance the migrator uses (PostgreSQL narrows its catalogue look-ups to one schema). */
  protected migrationDb(schema?: string): Kysely<Database> {
    void schema;
    return this.db;
  }

  /** `schema`: where the migration tables live (PostgreSQL); Kysely would otherwise look in every schema. */
  protected async runMigrations(schema?: string): Promise<void> {
    const migrator = new Migrator({
      db: this.migrationDb(schema),
      provider: migrationProvider,
      migrationTableName: 'vigil_migrations',
      migrationLockTableName: 'vigil_migrations_lock',
      ...(schema !== undefined ? { migrationTableSchema: schema } : {}),
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
  }

  async ping(): Promise<void> {
    await this.read('ping', () => sql`select 1`.execute(this.db));
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.onClose();
  }

  async createAccount(input: { id: string; name: string; plan: string; createdAt: number }): Promise<Account> {
    const row = { id: input.id, name: input.name, plan: input.plan, created_at: input.createdAt, settings: '{}' };
    await this.guard('createAccount', () => this.db.insertInto('accounts').values(row).execute());
    return toAccount(row);
  }

  async getAccount(id: string): Promise<Account | undefined> {
    if (this.unmatchable(id)) return undefined;
    const row = await this.read('getAccount', () => this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst());
    return row && toAccount(row);
  }

  async listAccounts(): Promise<readonly Account[]> {
    const rows = await this.read('listAccounts', () => this.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute());
    return rows.map(toAccount);
  }

  async countAccounts(): Promise<number> {
    const row = await this.read('countAccounts', () =>
      this.db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow(),
    );
    return num(row.n);
  }

  async updateAccount(id: string, patch: { plan?: string; name?: string; settings?: Record<string, unknown> }): Promise<Account | undefined> {
    if (this.unmatchable(id)) return undefined;
    const values: Partial<Row<'accounts'>> = {};
    if (patch.plan !== undefined) values.plan = patch.plan;
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.settings !== undefined) values.settings = JSON.stringify(patch.settings);
    if (Object.keys(values).length > 0) {
      await this.guard('updateAccount', () => this.db.updateTable('accounts').set(values).where('id', '=', id).execute());
    }
    return this.getAccount(id);
  }

  async createKey(input: NewKey): Promise<ApiKeyRecord> {
    const row: Row<'api_keys'> = {
      id: input.id,
      account_id: input.accountId,
      kind: input.kind,
      hash: input.hash,
      prefix: input.prefix,
      allowed_origins: JSON.stringify(input.allowedOrigins),
      created_at: input.createdAt,
      revoked_at: null,
    };
    await this.guard('createKey', () => this.db.insertInto('api_keys').values(row).execute());
    return toKey(row);
  }

  async findKeyByHash(hash: string): Promise<{ key: ApiKeyRecord; hash: string; account: Account } | undefined> {
    if (this.unmatchable(hash)) return undefined;
    const row = await this.read('findKeyByHash', () =>
      this.db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select([
          'api_keys.id as id',
          'api_keys.account_id as account_id',
          'api_keys.kind as kind',
          'api_keys.hash as hash',
          'api_keys.prefix as prefix',
          'api_keys.allowed_origins as allowed_origins',
          'api_keys.created_at as created_at',
          'api_keys.revoked_at as revoked_at',
          'accounts.name as account_name',
          'accounts.plan as account_plan',
          'accounts.created_at as account_created_at',
          'accounts.settings as account_settings',
        ])
        .where('api_keys.hash', '=', hash)
        .executeTakeFirst(),
    );
    if (!row) return undefined;
    return {
      key: toKey(row),
      hash: row.hash,
      account: toAccount({
        id: row.account_id,
        name: row.account_name,
        plan: row.account_plan,
        created_at: row.account_created_at,
        settings: row.account_settings,
      }),
    };
  }

  async listKeys(accountId?: string): Promise<readonly ApiKeyRecord[]> {
    if (this.unmatchable(accountId)) return [];
    let query = this.db.selectFrom('api_keys').selectAll();
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const rows = await this.read('listKeys', () => query.orderBy('created_at').orderBy('id').execute());
    return rows.map(toKey);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    if (this.unmatchable(id)) return false;
    const result = await this.guard('revokeKey', () =>
      this.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst(),
    );
    if (num(result.numUpdatedRows) > 0) return true;
    const exists = await this.guard('revokeKey', () => this.db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst());
    return exists !== undefined;
  }

  async setKeyOrigins(id: string, allowedOrigins: readonly string[]): Promise<ApiKeyRecord | undefined> {
    if (this.unmatchable(id)) return undefined;
    await this.guard('setKeyOrigins', () =>
      this.db
        .updateTable('api_keys')
        .set({ allowed_origins: JSON.stringify(allowedOrigins) })
        .where('id', '=', id)
        .executeTakeFirst(),
    );
    const row = await this.guard('setKeyOrigins', () => this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst());
    return row ? toKey(row) : undefined;
  }

  /** Writes a commit group in one transaction: all of it or none. Each backend writes it its own way. */
  abstract commit(batch: CommitBatch, options?: CommitOptions): Promise<void>;

  async getEvent(accountId: string, id: string): Promise<EventRow | undefined> {
    if (this.unmatchable(accountId, id)) return undefined;
    const row = await this.read('getEvent', () =>
      this.db.selectFrom('events').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toEvent(row);
  }

  async listEvents(accountId: string, filter: EventFilter, limit: number, cursor?: string): Promise<Page<EventRow>> {
    if (this.unmatchable(accountId, cursor, filter.type, filter.typePrefix, filter.actorId, filter.ip, filter.tag)) return { items: [], nextCursor: null };
    const rows = await this.read('listEvents', () => this.eventPage(accountId, filter, limit + 1, cursor));
    const items = rows.slice(0, limit).map(toEvent);
    return { items, nextCursor: rows.length > limit ? (items[items.length - 1]?.id ?? null) : null };
  }

  /** The account's events that pass the filter and follow the cursor, newest id first. */
  protected eventPage(accountId: string, filter: EventFilter, limit: number, cursor: string | undefined): Promise<Row<'events'>[]> {
    return this.db
      .selectFrom('events')
      .selectAll()
      .where('account_id', '=', accountId)
      .where(this.eventConditions(filter, cursor))
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** The filter and cursor as one condition on unqualified events columns other than account_id. */
  protected eventConditions(filter: EventFilter, cursor: string | undefined): RawBuilder<boolean> {
    const parts: RawBuilder<unknown>[] = [];
    if (filter.type !== undefined) parts.push(sql`type = ${filter.type}`);
    if (filter.typePrefix !== undefined) parts.push(sql`type like ${likeLiteral(filter.typePrefix) + '%'} escape '\\'`);
    if (filter.actorId !== undefined) parts.push(sql`actor_id = ${filter.actorId}`);
    if (filter.ip !== undefined) parts.push(sql`ip = ${filter.ip}`);
    if (filter.minRisk !== undefined) parts.push(sql`risk_score >= ${filter.minRisk}`);
    if (filter.since !== undefined) parts.push(sql`occurred_at >= ${filter.since}`);
    if (filter.until !== undefined) parts.push(sql`occurred_at < ${filter.until}`);
    if (filter.tag !== undefined) parts.push(this.hasTag(filter.tag));
    if (cursor !== undefined) parts.push(sql`id < ${cursor}`);
    return parts.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`${sql.join(parts, sql` and `)}`;
  }

  /** Rows whose JSON `tags` array holds this exact tag. */
  protected hasTag(tag: string): RawBuilder<boolean> {
    return sql<boolean>`tags like ${'%' + likeLiteral(JSON.stringify(tag)) + '%'} escape '\\'`;
  }

  async countEvents(accountId: string): Promise<number> {
    if (this.unmatchable(accountId)) return 0;
    const row = await this.read('countEvents', () =>
      this.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    );
    return num(row.n);
  }

  async findIdempotency(accountId: string, eventIds: readonly string[], since: number): Promise<ReadonlyMap<string, IdempotencyRow>> {
    const found = new Map<string, IdempotencyRow>();
    const ids = eventIds.filter((id) => !this.unmatchable(accountId, id));
    for (let from = 0; from < ids.length; from += IDEMPOTENCY_LOOKUP_CHUNK) {
      const chunk = ids.slice(from, from + IDEMPOTENCY_LOOKUP_CHUNK);
      const rows = await this.read('findIdempotency', () =>
        this.db
          .selectFrom('idempotency')
          .selectAll()
          .where('account_id', '=', accountId)
          .where('event_id', 'in', chunk)
          .where('created_at', '>=', since)
          .execute(),
      );
      for (const row of rows) found.set(row.event_id, toIdempotency(row));
    }
    return found;
  }

  async getAlert(accountId: string, id: string): Promise<AlertRow | undefined> {
    if (this.unmatchable(accountId, id)) return undefined;
    const row = await this.read('getAlert', () =>
      this.db.selectFrom('alerts').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && alertRowOf(row);
  }

  async listAlerts(accountId: string, filter: AlertFilter, limit: number, cursor?: string): Promise<Page<AlertRow>> {
    if (this.unmatchable(accountId, cursor, filter.type, filter.typePrefix, filter.severity, filter.status, filter.actorId))
      return { items: [], nextCursor: null };
    let q = this.db.selectFrom('alerts').selectAll().where('account_id', '=', accountId);
    if (filter.type !== undefined) q = q.where('type', '=', filter.type);
    if (filter.typePrefix !== undefined) q = q.where(sql<boolean>`type like ${likeLiteral(filter.typePrefix) + '%'} escape '\\'`);
    if (filter.severity !== undefined) q = q.where('severity', '=', filter.severity);
    if (filter.status !== undefined) q = q.where('status', '=', filter.status);
    if (filter.actorId !== undefined) q = q.where('actor_id', '=', filter.actorId);
    if (filter.since !== undefined) q = q.where('last_seen', '>=', filter.since);
    if (cursor !== undefined) q = q.where('id', '<', cursor);
    const rows = await this.read('listAlerts', () =>
      q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute(),
    );
    const items = rows.slice(0, limit).map(alertRowOf);
    return { items, nextCursor: rows.length > limit ? (items[items.length - 1]?.id ?? null) : null };
  }

  async setAlertStatus(accountId: string, id: string, status: AlertStatus, at: number): Promise<AlertRow | undefined> {
    if (this.unmatchable(accountId, id)) return undefined;
    const row = await this.guard('setAlertStatus', () => setStatusWithOutbox(this.db, accountId, id, status, at));
    return row && alertRowOf(row);
  }

  async getUsage(accountId: string, period: string): Promise<UsageRow> {
    if (this.unmatchable(accountId, period)) return { accountId, period, used: 0, dropped: 0 };
    const row = await this.read('getUsage', () =>
      this.db.selectFrom('usage_monthly').selectAll().where('account_id', '=', accountId).where('period', '=', period).executeTakeFirst(),
    );
    return { accountId, period, used: row ? num(row.used) : 0, dropped: row ? num(row.dropped) : 0 };
  }

  async dailyCounts(accountId: string, since: number): Promise<readonly { day: string; count: number }[]> {
    if (this.unmatchable(accountId)) return [];
    const sinceDay = new Date(since).toISOString().slice(0, 10);
    const rows = await this.read('dailyCounts', () =>
      this.db.selectFrom('usage_daily').select(['day', 'used']).where('account_id', '=', accountId).where('day', '>=', sinceDay).orderBy('day').execute(),
    );
    return rows.map((r) => ({ day: r.day, count: num(r.used) }));
  }

  async overview(accountId: string, since: number, bucketMs: number): Promise<Overview> {
    if (this.unmatchable(accountId)) return { events: [], alerts: [], openBySeverity: {}, topActors: [], topIps: [], chains: [] };
    const bucket = (column: 'received_at' | 'first_seen') => sql<number>`(${sql.ref(column)} / cast(${bucketMs} as bigint)) * cast(${bucketMs} as bigint)`;
    const recent = this.db.selectFrom('events').where('account_id', '=', accountId).where('received_at', '>=', since);
    const top = (column: 'actor_id' | 'ip') =>
      recent
        .select((eb) => [sql<string>`${sql.ref(column)}`.as('value'), eb.fn.countAll().as('n'), eb.fn.max('risk_score').as('max_risk')])
        .where(column, 'is not', null)
        .groupBy(column)
        .orderBy('n', 'desc')
        .orderBy(column)
        .limit(10)
        .execute();
    return this.read('overview', async () => {
      const [events, alerts, open, actors, ips, chains] = await Promise.all([
        recent
          .select((eb) => [bucket('received_at').as('at'), eb.fn.countAll().as('n')])
          .groupBy('at')
          .orderBy('at')
          .execute(),
        this.db
          .selectFrom('alerts')
          .select((eb) => [bucket('first_seen').as('at'), eb.fn.countAll().as('n')])
          .where('account_id', '=', accountId)
          .where('first_seen', '>=', since)
          .groupBy('at')
          .orderBy('at')
          .execute(),
        this.db
          .selectFrom('alerts')
          .select((eb) => ['severity', eb.fn.countAll().as('n')])
          .where('account_id', '=', accountId)
          .where('status', 'in', ['open', 'acknowledged'])
          .groupBy('severity')
          .execute(),
        top('actor_id'),
        top('ip'),
        this.db
          .selectFrom('alerts')
          .selectAll()
          .where('account_id', '=', accountId)
          .where('status', 'in', ['open', 'acknowledged'])
          .where(sql<boolean>`type like 'chain.%'`)
          .orderBy('last_seen', 'desc')
          .limit(10)
          .execute(),
      ]);
      const points = (rows: readonly { at: unknown; n: unknown }[]) => rows.map((r) => ({ at: num(r.at), count: num(r.n) }));
      const values = (rows: readonly { value: string; n: unknown; max_risk: unknown }[]) =>
        rows.map((r) => ({ value: r.value, count: num(r.n), maxRisk: num(r.max_risk) }));
      return {
        events: points(events),
        alerts: points(alerts),
        openBySeverity: Object.fromEntries(open.map((r) => [r.severity, num(r.n)])),
        topActors: values(actors),
        topIps: values(ips),
        chains: chains.map(alertRowOf),
      };
    });
  }

  async addAlertNote(note: AlertNote): Promise<void> {
    await this.guard('addAlertNote', () =>
      this.db
        .insertInto('alert_notes')
        .values({ id: note.id, account_id: note.accountId, alert_id: note.alertId, status: note.status, note: note.note, created_at: note.createdAt })
        .execute(),
    );
  }

  async listAlertNotes(accountId: string, alertId: string): Promise<readonly AlertNote[]> {
    if (this.unmatchable(accountId, alertId)) return [];
    const rows = await this.read('listAlertNotes', () =>
      this.db.selectFrom('alert_notes').selectAll().where('account_id', '=', accountId).where('alert_id', '=', alertId).orderBy('id').limit(500).execute(),
    );
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      alertId: r.alert_id,
      status: r.status as AlertStatus,
      note: r.note,
      createdAt: num(r.created_at),
    }));
  }

  async createDashboardSession(session: DashboardSession): Promise<void> {
    await this.guard('createDashboardSession', () =>
      this.db
        .insertInto('dashboard_sessions')
        .values({
          id_hash: session.idHash,
          account_id: session.accountId,
          key_id: session.keyId,
          csrf_token: session.csrfToken,
          created_at: session.createdAt,
          expires_at: session.expiresAt,
        })
        .execute(),
    );
  }

  async findDashboardSession(idHash: string, now: number): Promise<{ session: DashboardSession; keyHash: string } | undefined> {
    if (this.unmatchable(idHash)) return undefined;
    const row = await this.read('findDashboardSession', () =>
      this.db
        .selectFrom('dashboard_sessions as s')
        .innerJoin('api_keys as k', (j) => j.onRef('k.id', '=', 's.key_id').onRef('k.account_id', '=', 's.account_id'))
        .selectAll('s')
        .select('k.hash as key_hash')
        .where('s.id_hash', '=', idHash)
        .where('s.expires_at', '>', now)
        .executeTakeFirst(),
    );
    if (!row) return undefined;
    return {
      session: {
        idHash: row.id_hash,
        accountId: row.account_id,
        keyId: row.key_id,
        csrfToken: row.csrf_token,
        createdAt: num(row.created_at),
        expiresAt: num(row.expires_at),
      },
      keyHash: row.key_hash,
    };
  }

  async deleteDashboardSession(idHash: string, now: number): Promise<void> {
    await this.guard('deleteDashboardSession', () =>
      this.db
        .deleteFrom('dashboard_sessions')
        .where((eb) => eb.or([eb('id_hash', '=', idHash), eb('expires_at', '<=', now)]))
        .execute(),
    );
  }

  async pruneEvents(accountId: string, before: number): Promise<number> {
    if (this.unmatchable(accountId)) return 0;
    const result = await this.guard('pruneEvents', () =>
      this.db.deleteFrom('events').where('account_id', '=', accountId).where('received_at', '<', before).executeTakeFirst(),
    );
    return num(result.numDeletedRows);
  }

  async pruneIdempotency(before: number): Promise<number> {
    const result = await this.guard('pruneIdempotency', () => this.db.deleteFrom('idempotency').where('created_at', '<', before).executeTakeFirst());
    return num(result.numDeletedRows);
  }

  async dropEventsBefore(before: number): Promise<{ readonly partitionsDropped: number; readonly rowsDeleted: number }> {
    const result = await this.guard('dropEventsBefore', () => this.db.deleteFrom('events').where('received_at', '<', before).executeTakeFirst());
    return { partitionsDropped: 0, rowsDeleted: num(result.numDeletedRows) };
  }

  async maintain(now: number): Promise<void> {
    void now;
  }

  async listThreatModels(accountId: string): Promise<readonly ThreatModelRow[]> {
    if (this.unmatchable(accountId)) return [];
    const rows = await this.read('listThreatModels', () =>
      this.db.selectFrom('threat_models').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    );
    return rows.map(toThreatModel);
  }

  async getThreatModel(accountId: string, id: string): Promise<ThreatModelRow | undefined> {
    if (this.unmatchable(accountId, id)) return undefined;
    const row = await this.read('getThreatModel', () =>
      this.db.selectFrom('threat_models').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toThreatModel(row);
  }

  async createThreatModel(input: Omit<ThreatModelRow, 'version' | 'updatedAt' | 'suspendedAt' | 'suspendedReason'>): Promise<ThreatModelRow> {
    const row: Row<'threat_models'> = {
      id: input.id,
      account_id: input.accountId,
      version: 1,
      enabled: input.enabled ? 1 : 0,
      definition: JSON.stringify(input.definition),
      source: JSON.stringify(input.source),
      created_at: input.createdAt,
      updated_at: input.createdAt,
      suspended_at: null,
      suspended_reason: null,
    };
    await this.guard('createThreatModel', () =>
      this.db.transaction().execute(async (trx) => {
        await trx.insertInto('threat_models').values(row).execute();
        await trx
          .insertInto('threat_model_versions')
          .values({ account_id: row.account_id, model_id: row.id, version: 1, definition: row.definition, source: row.source, created_at: row.created_at })
          .execute();
      }),
    );
    return toThreatModel(row);
  }

  async updateThreatModel(
    accountId: string,
    id: string,
    expectedVersion: number,
    change: { readonly enabled: boolean; readonly definition: Record<string, unknown>; readonly source: Record<string, unknown>; readonly at: number },
  ): Promise<ThreatModelRow | undefined> {
    if (this.unmatchable(accountId, id)) return undefined;
    const definition = JSON.stringify(change.definition);
    const source = JSON.stringify(change.source);
    const version = expectedVersion + 1;
    const updated = await this.guard('updateThreatModel', () =>
      this.db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('threat_models')
          .set({ version, enabled: change.enabled ? 1 : 0, definition, source, updated_at: change.at, suspended_at: null, suspended_reason: null })
          .where('account_id', '=', accountId)
          .where('id', '=', id)
          .where('version', '=', expectedVersion)
          .executeTakeFirst();
        if (num(result.numUpdatedRows) === 0) return false;
        await trx
          .insertInto('threat_model_versions')
          .values({ account_id: accountId, model_id: id, version, definition, source, created_at: change.at })
          .execute();
        return true;
      }),
    );
    return updated ? this.getThreatModel(accountId, id) : undefined;
  }

  async suspendThreatModel(accountId: string, id: string, version: number, at: number, reason: string): Promise<boolean> {
    if (this.unmatchable(accountId, id)) return false;
    const result = await this.guard('suspendThreatModel', () =>
      this.db
        .updateTable('threat_models')
        .set({ suspended_at: at, suspended_reason: reason })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('version', '=', version)
        .where('suspended_at', 'is', null)
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async deleteThreatModel(accountId: string, id: string): Promise<boolean> {
    if (this.unmatchable(accountId, id)) return false;
    return this.guard('deleteThreatModel', () =>
      this.db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('threat_models').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
        await trx.deleteFrom('threat_model_versions').where('account_id', '=', accountId).where('model_id', '=', id).execute();
        return num(result.numDeletedRows) > 0;
      }),
    );
  }

  async listThreatModelVersions(accountId: string, id: string): Promise<readonly ThreatModelVersionRow[]> {
    if (this.unmatchable(accountId, id)) return [];
    const rows = await this.read('listThreatModelVersions', () =>
      this.db
        .selectFrom('threat_model_versions')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('model_id', '=', id)
        .orderBy('version', 'desc')
        .execute(),
    );
    return rows.map((r) => ({
      modelId: r.model_id,
      accountId: r.account_id,
      version: num(r.version),
      definition: parseJson(r.definition),
      source: parseJson(r.source),
      createdAt: num(r.created_at),
    }));
  }
}
