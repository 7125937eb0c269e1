import type { Kysely } from 'kysely';
import { keyText } from './dialect.js';

/**
 * Dashboard sign-in sessions, kept in the database so every instance of a scale-out
 * deployment accepts the same cookie. The session id is stored only as its SHA-256 hash.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyText(db);
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id_hash', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('key_id', key, (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboard_sessions_expires').on('dashboard_sessions').columns(['expires_at']).execute();

  await db.schema
    .createTable('alert_notes')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('alert_id', key, (c) => c.notNull())
    .addColumn('status', key, (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_notes_alert').on('alert_notes').columns(['account_id', 'alert_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alert_notes').ifExists().execute();
  await db.schema.dropTable('dashboard_sessions').ifExists().execute();
}
