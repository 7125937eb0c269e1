import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { PG_DOCUMENT_TSVECTOR, sqliteEventText } from '../search-text.js';

/**
 * Search (the `q`, `sort` and time range of the event and alert lists):
 *
 * - the full-text index of events (search-text.ts says what it holds). SQLite: a contentless
 *   FTS5 table keyed by the events' rowid, so the text is not stored twice: the writer inserts
 *   each event's text, made on the request thread, beside its row; a trigger deletes it with
 *   the row (the events table must never be VACUUMed: that renumbers the rowids of a table
 *   without an INTEGER PRIMARY KEY). PostgreSQL: a GIN
 *   index over an expression of the document, on the partitioned table and so on every month
 *   partition, present and future.
 * - the orders a list can be sorted in: event time and risk (SQLite had neither index; both are
 *   keyed by account and then a value that mostly grows or repeats, so the writer appends to
 *   them), and an alert's last sighting.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql.raw(`create index events_search on events using gin ((${PG_DOCUMENT_TSVECTOR}))`).execute(db);
    await db.schema.dropIndex('events_account_occurred').execute();
    await db.schema.createIndex('events_account_occurred').on('events').columns(['account_id', 'occurred_at', 'id']).execute();
  } else {
    await sql`create virtual table events_fts using fts5(text, content = '', contentless_delete = 1)`.execute(db);
    await sql`create trigger events_fts_delete after delete on events begin delete from events_fts where rowid = old.rowid; end`.execute(db);
    await sql.raw(`insert into events_fts (rowid, text) select rowid, ${sqliteEventText('events.doc')} from events`).execute(db);
    await db.schema.createIndex('events_account_occurred').on('events').columns(['account_id', 'occurred_at', 'id']).execute();
    await db.schema.createIndex('events_account_risk').on('events').columns(['account_id', 'risk_score', 'id']).execute();
  }
  await db.schema.createIndex('alerts_account_last_seen').on('alerts').columns(['account_id', 'last_seen', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('alerts_account_last_seen').execute();
  if (isPostgres(db)) {
    await db.schema.dropIndex('events_search').execute();
    await db.schema.dropIndex('events_account_occurred').execute();
    await db.schema.createIndex('events_account_occurred').on('events').columns(['account_id', 'occurred_at']).execute();
  } else {
    await db.schema.dropIndex('events_account_risk').execute();
    await db.schema.dropIndex('events_account_occurred').execute();
    await sql`drop trigger events_fts_delete`.execute(db);
    await sql`drop table events_fts`.execute(db);
  }
}
