import type { Kysely } from 'kysely';
import { keyText } from './dialect.js';

/**
 * Outbound webhooks: the endpoints each account configures and the outbox of deliveries.
 * A delivery row is written in the transaction that opens, escalates or changes the status of
 * its alert, so a crash can neither lose one nor invent one; the dispatcher then leases due
 * rows (`lease_until`), so two instances never send one delivery at the same time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyText(db);
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('format', key, (c) => c.notNull())
    .addColumn('min_severity', key, (c) => c.notNull())
    .addColumn('alert_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('kill_chains_only', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('endpoint_id', key, (c) => c.notNull())
    .addColumn('alert_id', key)
    .addColumn('event', key, (c) => c.notNull())
    .addColumn('alert', 'text', (c) => c.notNull())
    .addColumn('status', key, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['account_id', 'endpoint_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').ifExists().execute();
  await db.schema.dropTable('webhook_endpoints').ifExists().execute();
}
