import type { Kysely } from 'kysely';
import { keyText } from './dialect.js';

/**
 * Data subjects: erasure jobs (their progress and lease, so a restarted or another instance
 * finishes an interrupted one) and the suppression list (keyed hashes of identifiers, never the
 * identifiers themselves).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyText(db);
  await db.schema
    .createTable('subject_jobs')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('kind', key, (c) => c.notNull())
    .addColumn('status', key, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addColumn('identifiers', 'text', (c) => c.notNull())
    .addColumn('pending', 'text')
    .addColumn('suppress_days', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('step', 'text')
    .addColumn('done_steps', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_steps', 'integer', (c) => c.notNull())
    .addColumn('counts', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('subject_jobs_account').on('subject_jobs').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('subject_jobs_claim').on('subject_jobs').columns(['status', 'lease_until']).execute();

  await db.schema
    .createTable('subject_suppressions')
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('hash', key, (c) => c.notNull())
    .addColumn('kind', key, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('until', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('subject_suppressions_pk', ['account_id', 'hash'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('subject_suppressions').execute();
  await db.schema.dropTable('subject_jobs').execute();
}
