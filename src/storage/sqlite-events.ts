import type SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { hourOf, SUMMARY_HOUR_MS } from './event-hours.js';
import { translate, type KyselyAccess } from './kysely/access.js';
import { KyselyEventStore, toIdempotency } from './kysely/events.js';
import { SQLITE_ADDRESS_KEY, sqliteAddressKey, sqliteCandidates } from './kysely/search-sql.js';
import type { EventsTable, IdempotencyTable } from './schema.js';
import type { EventFilter, IdempotencyRow } from './types.js';

const FIND_IDEMPOTENCY =
  'select account_id, event_id, response, created_at, payload_digest from idempotency where account_id = ? and event_id = ? and created_at >= ?';

/** Candidate rows of a search read one by one rather than by walking the account in order (see searchPage). */
const SMALL_CANDIDATES = 20_000;

/** Events deleted per retention transaction (see deleteEvents). */
const RETENTION_CHUNK = 2_000;

/** Events on SQLite: idempotency look-ups by a prepared statement, and reads and retention through the hour summaries. */
export class SqliteEventStore extends KyselyEventStore {
  /** Prepared on first use (the table exists only after migrate()). */
  private findIdempotencyStatement: SqliteDatabase.Statement<unknown[], IdempotencyTable> | undefined;

  constructor(
    x: KyselyAccess,
    private readonly database: SqliteDatabase.Database,
  ) {
    super(x);
    // CIDR tests of searches compare addresses as keys that sort as the addresses do.
    database.function(SQLITE_ADDRESS_KEY, { deterministic: true }, sqliteAddressKey);
  }

  /**
   * The ingestion hot path asks this for every request whose events carry an event_id: a
   * statement prepared once costs a few µs per id, where building, compiling and preparing the
   * query through Kysely cost several times the lookup itself.
   */
  override async findIdempotency(accountId: string, eventIds: readonly string[], since: number): Promise<ReadonlyMap<string, IdempotencyRow>> {
    const found = new Map<string, IdempotencyRow>();
    try {
      this.findIdempotencyStatement ??= this.database.prepare<unknown[], IdempotencyTable>(FIND_IDEMPOTENCY);
      for (const eventId of eventIds) {
        const row = this.findIdempotencyStatement.get(accountId, eventId, since);
        if (row) found.set(eventId, toIdempotency(row));
      }
    } catch (err) {
      throw translate('findIdempotency', err);
    }
    return found;
  }

  /**
   * Events has no actor or address index (each cost the writer a random page per event): a
   * read by actor or address walks that value's hours from its summary and reads each hour
   * through the (account_id, received_at, actor_id, ip) index, which filters the hour's events
   * without reading their rows. CROSS JOIN keeps the summary the outer loop,
   * so the planner cannot choose to scan the whole account in id order instead.
   */
  protected override eventPage(accountId: string, filter: EventFilter, limit: number, cursor: string | undefined): Promise<EventsTable[]> {
    const hours =
      filter.actorId !== undefined
        ? sql`select hour from event_actor_hours where account_id = ${accountId} and actor = ${filter.actorId}`
        : filter.ip !== undefined
          ? sql`select hour from event_ip_hours where account_id = ${accountId} and address = ${filter.ip}`
          : undefined;
    if (hours === undefined) return this.searchPage(accountId, filter, limit, cursor);
    const query = sql<EventsTable>`select events.* from (${hours}) as h cross join events
      where events.account_id = ${accountId}
        and events.received_at >= h.hour * ${sql.lit(SUMMARY_HOUR_MS)} and events.received_at < (h.hour + 1) * ${sql.lit(SUMMARY_HOUR_MS)}
        and ${this.eventConditions(accountId, filter, cursor)}
      ${this.eventOrder(filter.sort)} limit ${limit}`;
    return query.execute(this.x.db).then((r) => r.rows);
  }

  /**
   * A search whose query names a set of candidate rows (search-sql.ts, sqliteCandidates) reads
   * those rows by rowid and sorts them when the set is small: walking the account in its sort
   * order until a page is full reads every row of the account when the matches are rare. How
   * small the set is comes from the index itself, counting at most SMALL_CANDIDATES of it;
   * a larger set means the matches are common and the ordered walk fills a page soon.
   */
  private async searchPage(accountId: string, filter: EventFilter, limit: number, cursor: string | undefined): Promise<EventsTable[]> {
    const candidates = filter.query ? sqliteCandidates(filter.query, accountId) : undefined;
    if (candidates === undefined) return super.eventPage(accountId, filter, limit, cursor);
    const counted = await sql<{ n: number }>`select count(*) as n from (${candidates} limit ${SMALL_CANDIDATES})`.execute(this.x.db);
    if ((counted.rows[0]?.n ?? 0) >= SMALL_CANDIDATES) return super.eventPage(accountId, filter, limit, cursor);
    const query = sql<EventsTable>`select events.* from (${candidates}) as c cross join events on events.rowid = c.rid
      where events.account_id = ${accountId} and ${this.eventConditions(accountId, filter, cursor)}
      ${this.eventOrder(filter.sort)} limit ${limit}`;
    return query.execute(this.x.db).then((r) => r.rows);
  }

  /** Deletes the events and the summary hours that lie wholly before `before`. */
  override async pruneEvents(accountId: string, before: number): Promise<number> {
    if (this.x.unmatchable(accountId)) return 0;
    return this.x.guard('pruneEvents', () => this.deleteEvents(before, accountId));
  }

  /**
   * SQLite has no partitions, and a delete by time alone would scan the whole events table
   * (its index on time starts with the account): the accounts holding events are found one
   * index seek each, and each one's rows go through that index.
   */
  override async dropEventsBefore(before: number): Promise<{ readonly partitionsDropped: number; readonly rowsDeleted: number }> {
    let rowsDeleted = 0;
    const nextAccount = (after: string) =>
      this.x.db.selectFrom('events').select('account_id').where('account_id', '>', after).orderBy('account_id').limit(1).executeTakeFirst();
    for (let row = await this.x.guard('dropEventsBefore', () => nextAccount('')); row !== undefined;) {
      const accountId = row.account_id;
      rowsDeleted += await this.x.guard('dropEventsBefore', () => this.deleteEvents(before, accountId));
      row = await this.x.guard('dropEventsBefore', () => nextAccount(accountId));
    }
    return { partitionsDropped: 0, rowsDeleted };
  }

  /**
   * Deletes an account's events before `before` in transactions of at most RETENTION_CHUNK rows,
   * letting requests run between them (the request thread's connection does this, and one
   * transaction over an hour's or a day's events would stop it for as long); then, in one
   * transaction, the summary hours wholly before it, moving the summaries' epoch, which tells the
   * writer that summary rows it remembers writing may be gone.
   */
  private async deleteEvents(before: number, accountId: string): Promise<number> {
    let deleted = 0;
    for (;;) {
      const chunk = await sql`delete from events where rowid in (
          select rowid from events where account_id = ${accountId} and received_at < ${before} limit ${RETENTION_CHUNK})`.execute(this.x.db);
      const rows = Number(chunk.numAffectedRows ?? 0);
      deleted += rows;
      if (rows < RETENTION_CHUNK) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const hour = hourOf(before);
    await this.x.db.transaction().execute(async (trx) => {
      const actors = await trx.deleteFrom('event_actor_hours').where('account_id', '=', accountId).where('hour', '<', hour).executeTakeFirst();
      const addresses = await trx.deleteFrom('event_ip_hours').where('account_id', '=', accountId).where('hour', '<', hour).executeTakeFirst();
      if (Number(actors.numDeletedRows) + Number(addresses.numDeletedRows) > 0)
        await trx
          .updateTable('event_hours_epoch')
          .set((eb) => ({ epoch: eb('epoch', '+', 1) }))
          .where('id', '=', 1)
          .execute();
    });
    return deleted;
  }
}
