import { PostgresAdapter, sql, type Expression, type Kysely } from 'kysely';

/** Migrations are one set for both databases; they branch on this where the SQL must differ. */
export const isPostgres = (db: Kysely<unknown>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Text that is compared, ordered and paginated on (ids, types): byte order on PostgreSQL
 * too, so `id < cursor` and ORDER BY agree with SQLite whatever the database's locale, and
 * a `LIKE 'prefix%'` can use a plain btree index.
 */
export const keyText = (db: Kysely<unknown>): Expression<unknown> | 'text' => (isPostgres(db) ? sql`text collate "C"` : 'text');
