import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { KyselyAccess, Row } from './kysely/access.js';
import { KyselyEventStore } from './kysely/events.js';
import { pgCandidates } from './kysely/search-sql.js';
import { dropMonthPartitionsBefore } from './postgres-partitions.js';
import type { EventFilter } from './types.js';

/** Candidate rows of a search read through the index and sorted, rather than by walking the account in order (see eventPage). */
const SMALL_CANDIDATES = 20_000;

/** Rows of the account read in the sort's order before counting candidates: a search matching one row in 40 fills a page from them. */
const RECENT_ROWS = 2_000;

/** Events on PostgreSQL: month partitions for retention, a GIN index for the tag filter. */
export class PostgresEventStore extends KyselyEventStore {
  /** Whether the trigram index exists (migration 010 leaves it out when pg_trgm cannot be created); asked once. */
  private trigrams: Promise<boolean> | undefined;
  constructor(
    x: KyselyAccess,
    /** The schema the tables live in. */
    private readonly schema: () => Promise<string>,
  ) {
    super(x);
  }

  override async dropEventsBefore(before: number): Promise<{ readonly partitionsDropped: number; readonly rowsDeleted: number }> {
    const schema = await this.schema();
    return this.x.guard('dropEventsBefore', () => dropMonthPartitionsBefore(this.x.db as unknown as Kysely<unknown>, schema, before));
  }

  /**
   * A search whose query names candidate rows through the full-text or trigram index
   * (search-sql.ts, pgCandidates) first tests the newest RECENT_ROWS rows in the sort's order;
   * when they hold no full page, it counts the candidates, through that index, up to SMALL_CANDIDATES: a
   * small set is read by the index and sorted; a larger one means matches are common, and the
   * walk of the account in the sort's order fills a page soon. The planner would choose the walk
   * for a rare prefix or pattern too (it expects far more matches than there are), so the count
   * and the read of a small set run with plain and sequential scans off: the only plans left are
   * bitmap scans of the indexes.
   */
  protected override async eventPage(accountId: string, filter: EventFilter, limit: number, cursor: string | undefined): Promise<Row<'events'>[]> {
    const candidates = filter.query ? pgCandidates(filter.query, await this.hasTrigrams()) : undefined;
    if (candidates === undefined) return super.eventPage(accountId, filter, limit, cursor);
    // Common matches first: the newest rows in the sort's order hold a full page of them (and
    // then that page is the answer), at the cost of a short ordered read.
    const recent = await sql<Row<'events'>>`select * from (select * from events where account_id = ${accountId}
        and ${this.eventConditions(accountId, { ...(filter.sort !== undefined ? { sort: filter.sort } : {}) }, cursor)}
        ${this.eventOrder(filter.sort)} limit ${RECENT_ROWS}) as events
      where ${this.eventConditions(accountId, filter, cursor)} ${this.eventOrder(filter.sort)} limit ${limit}`.execute(this.x.db);
    if (recent.rows.length >= limit) return recent.rows;
    const few = await this.x.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_indexscan = off`.execute(trx);
      await sql`set local enable_indexonlyscan = off`.execute(trx);
      // Room for an exact bitmap of a common word's rows: a lossy one rechecks every row of its pages.
      await sql`set local work_mem = '32MB'`.execute(trx);
      const counted = await sql<{ n: string | number }>`select count(*) as n from (select 1 from events
        where account_id = ${accountId} and ${candidates} limit ${SMALL_CANDIDATES}) as c`.execute(trx);
      if (Number(counted.rows[0]?.n ?? 0) >= SMALL_CANDIDATES) return undefined;
      const read = await sql<Row<'events'>>`select * from events where account_id = ${accountId} and ${candidates}
        and ${this.eventConditions(accountId, filter, cursor)} ${this.eventOrder(filter.sort)} limit ${limit}`.execute(trx);
      return read.rows;
    });
    return few ?? super.eventPage(accountId, filter, limit, cursor);
  }

  private hasTrigrams(): Promise<boolean> {
    this.trigrams ??= sql<{ present: boolean }>`select to_regclass('events_search_trgm') is not null as present`.execute(this.x.db).then(
      (r) => r.rows[0]?.present === true,
      (err: unknown) => {
        this.trigrams = undefined;
        throw err;
      },
    );
    return this.trigrams;
  }

  /** Served by the GIN index on `tags::jsonb`. */
  protected override hasTag(tag: string): RawBuilder<boolean> {
    return sql<boolean>`(tags::jsonb) @> ${JSON.stringify([tag])}::jsonb`;
  }
}
