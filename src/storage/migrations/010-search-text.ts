import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { PG_DOCUMENT_TSVECTOR, PG_EVENT_TSVECTOR, pgDocumentTexts, sqliteEventText } from '../search-text.js';

/**
 * Search of patterns inside a value, and PostgreSQL's full-text index without a document parse:
 *
 * - PostgreSQL: a `search_text` column holds each event's indexed text (search-text.ts), which
 *   the writer makes on the request thread as SQLite's does; the full-text index is rebuilt over
 *   it, so an insert no longer parses the document and walks it with a JSON path. Rows stored
 *   before are filled from their documents here. A trigram index (pg_trgm) over the same text
 *   serves patterns that start with a wildcard (`email:*smith*`, `actor_id:*ana.smi*`). pg_trgm
 *   is a trusted extension (PostgreSQL 13 and later): the database's owner may create it. It is
 *   created in the `public` schema, or found wherever it already is, so that schemas of one
 *   database share it and dropping one schema does not drop it. When it cannot be created, the
 *   migration goes on without the trigram index and such patterns read the account in order
 *   (postgres-events.ts asks once whether the index exists, and leaves it out of its count).
 * - SQLite: a contentless FTS5 table with the trigram tokenizer over the same text, keyed by
 *   the events' rowid like events_fts, serves the same patterns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table events add column search_text text`.execute(db);
    await sql`drop index events_search`.execute(db);
    await sql
      .raw(`update events set search_text = coalesce((select string_agg(t, ' ') from jsonb_array_elements_text(${pgDocumentTexts('doc')}) as t), '')`)
      .execute(db);
    await sql.raw(`create index events_search on events using gin ((${PG_EVENT_TSVECTOR}))`).execute(db);
    const trigrams = await trigramSchema(db);
    if (trigrams !== undefined) await sql.raw(`create index events_search_trgm on events using gin (search_text "${trigrams}".gin_trgm_ops)`).execute(db);
  } else {
    await sql`create virtual table events_trigram using fts5(text, content = '', contentless_delete = 1, tokenize = 'trigram')`.execute(db);
    await sql`create trigger events_trigram_delete after delete on events begin delete from events_trigram where rowid = old.rowid; end`.execute(db);
    await sql.raw(`insert into events_trigram (rowid, text) select rowid, ${sqliteEventText('events.doc')} from events`).execute(db);
  }
}

/**
 * The schema of pg_trgm, created in `public` when absent; undefined when it is neither there nor
 * creatable (not installed on the server, or not allowed): tried in a savepoint, since the
 * migrations run in one transaction.
 */
async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const found = async () =>
    (
      await sql<{
        schema: string;
      }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema;
  const present = await found();
  if (present !== undefined) return present;
  await sql`savepoint vigil_trgm`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    await sql`release savepoint vigil_trgm`.execute(db);
  } catch {
    await sql`rollback to savepoint vigil_trgm`.execute(db);
    return undefined;
  }
  return found();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop index if exists events_search_trgm`.execute(db);
    await sql`drop index events_search`.execute(db);
    await sql.raw(`create index events_search on events using gin ((${PG_DOCUMENT_TSVECTOR}))`).execute(db);
    await sql`alter table events drop column search_text`.execute(db);
  } else {
    await sql`drop trigger events_trigram_delete`.execute(db);
    await sql`drop table events_trigram`.execute(db);
  }
}
