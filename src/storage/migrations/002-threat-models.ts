import type { Kysely } from 'kysely';
import { keyText } from './dialect.js';

/**
 * Custom threat models: the current version of each model, and every version ever saved (an
 * alert names the version that raised it). Definitions are JSON text like the other documents.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyText(db);
  await db.schema
    .createTable('threat_models')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('threat_models_account').on('threat_models').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('threat_model_versions')
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('model_id', key, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('threat_model_versions_pk', ['account_id', 'model_id', 'version'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('threat_model_versions').ifExists().execute();
  await db.schema.dropTable('threat_models').ifExists().execute();
}
