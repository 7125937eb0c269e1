import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { SUMMARY_HOUR_MS } from '../event-hours.js';

/**
 * SQLite only: the events table's actor and ip indexes give way to per-account, per-hour
 * summaries of which actors and which addresses appear. An index keyed by a random value
 * costs the writer a random page per event; a summary row is written once per (account,
 * value, hour). A read by actor or address finds its hours in the summary and reads those
 * hours through the (account_id, received_at) index, which also holds actor_id and ip so the
 * events of those hours are filtered on the index alone; keyed by time, it stays an append
 * for the writer. The epoch row counts summary
 * deletions, so the writer knows when the rows it remembers writing may be gone.
 * PostgreSQL keeps its indexes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema.dropIndex('events_account_actor').execute();
  await db.schema.dropIndex('events_account_ip').execute();
  await db.schema.dropIndex('events_account_received').execute();
  await db.schema.createIndex('events_account_received').on('events').columns(['account_id', 'received_at', 'actor_id', 'ip']).execute();
  await sql`create table event_actor_hours (account_id text not null, actor text not null, hour integer not null, primary key (account_id, actor, hour)) without rowid`.execute(
    db,
  );
  await sql`create table event_ip_hours (account_id text not null, address text not null, hour integer not null, primary key (account_id, address, hour)) without rowid`.execute(
    db,
  );
  await sql`create table event_hours_epoch (id integer primary key, epoch integer not null)`.execute(db);
  await sql`insert into event_hours_epoch (id, epoch) values (1, 0)`.execute(db);
  await sql`insert into event_actor_hours (account_id, actor, hour)
    select distinct account_id, actor_id, received_at / ${sql.lit(SUMMARY_HOUR_MS)} from events where actor_id is not null`.execute(db);
  await sql`insert into event_ip_hours (account_id, address, hour)
    select distinct account_id, ip, received_at / ${sql.lit(SUMMARY_HOUR_MS)} from events where ip is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await db.schema.dropTable('event_hours_epoch').execute();
  await db.schema.dropTable('event_ip_hours').execute();
  await db.schema.dropTable('event_actor_hours').execute();
  await db.schema.dropIndex('events_account_received').execute();
  await db.schema.createIndex('events_account_received').on('events').columns(['account_id', 'received_at']).execute();
  await db.schema.createIndex('events_account_actor').on('events').columns(['account_id', 'actor_id', 'id']).execute();
  await db.schema.createIndex('events_account_ip').on('events').columns(['account_id', 'ip', 'id']).execute();
}
