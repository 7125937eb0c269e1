import type { Kysely } from 'kysely';

/**
 * A threat model suspended for what it costs to evaluate keeps its row and version: two nullable
 * columns say since when and why. Both databases take the same statements, one column each
 * (SQLite adds one column per ALTER TABLE).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threat_models').addColumn('suspended_at', 'bigint').execute();
  await db.schema.alterTable('threat_models').addColumn('suspended_reason', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('threat_models').dropColumn('suspended_reason').execute();
  await db.schema.alterTable('threat_models').dropColumn('suspended_at').execute();
}
