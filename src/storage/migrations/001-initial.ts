import { sql, type Kysely } from 'kysely';
import { isPostgres, keyText } from './dialect.js';

/**
 * Portable schema (SQLite and PostgreSQL). Times are integer milliseconds since the epoch;
 * JSON documents are text so both databases store them the same way. PostgreSQL differs in
 * the events table (partitioned by month, see createPostgresEvents) and in byte-order
 * collation for key columns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyText(db);
  await db.schema
    .createTable('accounts')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', key, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('kind', key, (c) => c.notNull())
    .addColumn('hash', key, (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id']).execute();

  if (isPostgres(db)) await createPostgresEvents(db);
  else await createSqliteEvents(db);

  await db.schema
    .createTable('alerts')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('type', key, (c) => c.notNull())
    .addColumn('severity', key, (c) => c.notNull())
    .addColumn('subject', key, (c) => c.notNull())
    .addColumn('status', key, (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('first_seen', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .addColumn('actor_id', key)
    .addColumn('event_ids', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alerts_account_id').on('alerts').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('alerts_account_type_subject').on('alerts').columns(['account_id', 'type', 'subject']).execute();

  await db.schema
    .createTable('usage_monthly')
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('period', key, (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull())
    .addColumn('dropped', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_monthly_pk', ['account_id', 'period'])
    .execute();

  await db.schema
    .createTable('usage_daily')
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('day', key, (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull())
    .addColumn('dropped', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_daily_pk', ['account_id', 'day'])
    .execute();

  await db.schema
    .createTable('idempotency')
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('event_id', key, (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_pk', ['account_id', 'event_id'])
    .execute();
  await db.schema.createIndex('idempotency_created').on('idempotency').columns(['created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['idempotency', 'usage_daily', 'usage_monthly', 'alerts', 'events', 'api_keys', 'accounts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

async function createSqliteEvents(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text')
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('risk_score', 'integer', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('doc', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_account_id').on('events').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('events_account_type').on('events').columns(['account_id', 'type', 'id']).execute();
  await db.schema.createIndex('events_account_actor').on('events').columns(['account_id', 'actor_id', 'id']).execute();
  await db.schema.createIndex('events_account_ip').on('events').columns(['account_id', 'ip', 'id']).execute();
  await db.schema.createIndex('events_account_received').on('events').columns(['account_id', 'received_at']).execute();
}

/**
 * Events on PostgreSQL: range-partitioned by month on received_at, so retention drops whole
 * partitions (Store.dropEventsBefore) and recent reads touch only recent partitions. The
 * month partitions are created ahead by Store.maintain; the default partition catches any
 * row no month partition covers yet, so a late maintenance run never fails an insert. The
 * unique key must contain the partition column; (account_id, id, received_at) also serves
 * the default listing (account, newest id first) and lookups by id.
 */
async function createPostgresEvents(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table events (
      id text collate "C" not null,
      account_id text collate "C" not null,
      type text collate "C" not null,
      event_id text collate "C",
      occurred_at bigint not null,
      received_at bigint not null,
      actor_id text collate "C",
      ip text collate "C",
      risk_score integer not null,
      tags text not null,
      doc text not null,
      constraint events_pk primary key (account_id, id, received_at)
    ) partition by range (received_at)`.execute(db);
  await sql`create table events_default partition of events default`.execute(db);
  // One index per read filter; each ends in id so the newest-first page needs no sort.
  await db.schema.createIndex('events_account_type').on('events').columns(['account_id', 'type', 'id']).execute();
  await db.schema.createIndex('events_account_actor').on('events').columns(['account_id', 'actor_id', 'id']).execute();
  await db.schema.createIndex('events_account_ip').on('events').columns(['account_id', 'ip', 'id']).execute();
  await db.schema.createIndex('events_account_risk').on('events').columns(['account_id', 'risk_score', 'id']).execute();
  await db.schema.createIndex('events_account_occurred').on('events').columns(['account_id', 'occurred_at']).execute();
  await sql`create index events_tags on events using gin ((tags::jsonb) jsonb_path_ops)`.execute(db);
}
