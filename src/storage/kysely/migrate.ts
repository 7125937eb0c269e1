import { Migrator, type Kysely } from 'kysely';
import { migrationProvider } from '../migrations/index.js';
import type { Database } from '../schema.js';

/**
 * Brings the schema to the latest migration. `schema`: where the migration tables live
 * (PostgreSQL); Kysely would otherwise look in every schema.
 */
export async function runMigrations(db: Kysely<Database>, schema?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    migrationTableName: 'vigil_migrations',
    migrationLockTableName: 'vigil_migrations_lock',
    ...(schema !== undefined ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
