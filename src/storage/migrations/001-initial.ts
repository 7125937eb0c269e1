import { sql, type Kysely } from 'kysely';

/**
 * Portable schema (SQLite and PostgreSQL). Times are integer milliseconds since the epoch;
 * JSON documents are text so both databases store them the same way.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id']).execute();

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

  await db.schema
    .createTable('alerts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('first_seen', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('event_ids', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alerts_account_id').on('alerts').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('alerts_account_type_subject').on('alerts').columns(['account_id', 'type', 'subject']).execute();

  await db.schema
    .createTable('usage_monthly')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull())
    .addColumn('dropped', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_monthly_pk', ['account_id', 'period'])
    .execute();

  await db.schema
    .createTable('usage_daily')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull())
    .addColumn('dropped', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_daily_pk', ['account_id', 'day'])
    .execute();

  await db.schema
    .createTable('idempotency')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_pk', ['account_id', 'event_id'])
    .execute();
  await db.schema.createIndex('idempotency_created').on('idempotency').columns(['created_at']).execute();
  void sql;
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['idempotency', 'usage_daily', 'usage_monthly', 'alerts', 'events', 'api_keys', 'accounts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
