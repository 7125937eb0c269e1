import type { Kysely } from 'kysely';

/**
 * The SHA-256 of the event an idempotency key was first used with, so that the same key with
 * another payload is refused instead of answered with the first result. Rows written before
 * this column have none: a repeat of their key replays, as it did when they were written.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency').addColumn('payload_digest', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency').dropColumn('payload_digest').execute();
}
