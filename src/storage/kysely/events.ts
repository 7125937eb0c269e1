import { sql, type RawBuilder } from 'kysely';
import type { EventStore } from '../store.js';
import type { EventFilter, EventRow, EventSort, IdempotencyRow, Page } from '../types.js';
import { readSortCursor, writeSortCursor } from '../sort-cursor.js';
import { bucketCounts, bucketOf } from './histogram.js';
import { likeLiteral, num, pageOf, parseJson, type KyselyAccess, type Row } from './access.js';
import { searchCondition } from './search-sql.js';

const SORT_COLUMN: Readonly<Record<EventSort, string>> = {
  '-occurred_at': 'occurred_at',
  occurred_at: 'occurred_at',
  '-risk': 'risk_score',
  risk: 'risk_score',
};

/** Rows after the cursor's row in the sort's order (an id alone without a sort). */
function cursorCondition(sort: EventSort | undefined, cursor: string): RawBuilder<unknown> {
  const after = sort === undefined ? undefined : readSortCursor(cursor);
  if (sort === undefined || after === undefined) return sql`events.id < ${cursor}`;
  const column = sql.ref(`events.${SORT_COLUMN[sort]}`);
  return sort.startsWith('-') ? sql`(${column}, events.id) < (${after.value}, ${after.id})` : sql`(${column}, events.id) > (${after.value}, ${after.id})`;
}

/** Event ids per idempotency query: a batch's ids fit in one, far below any parameter limit. */
const IDEMPOTENCY_LOOKUP_CHUNK = 1_000;

export function toEvent(row: Row<'events'>): EventRow {
  return {
    id: row.id,
    accountId: row.account_id,
    type: row.type,
    eventId: row.event_id,
    occurredAt: num(row.occurred_at),
    receivedAt: num(row.received_at),
    actorId: row.actor_id,
    ip: row.ip,
    riskScore: num(row.risk_score),
    tags: parseJson(row.tags),
    doc: parseJson(row.doc),
  };
}

export function toIdempotency(row: Row<'idempotency'>): IdempotencyRow {
  return {
    accountId: row.account_id,
    eventId: row.event_id,
    response: parseJson(row.response),
    createdAt: num(row.created_at),
    payloadDigest: row.payload_digest,
  };
}

/**
 * Events and idempotency rows over Kysely. The backends differ in the events table's physical
 * layout (partitioned on PostgreSQL, hour summaries on SQLite) and in the tag filter, which
 * PostgreSQL answers from a GIN index: their subclasses override those statements.
 */
export class KyselyEventStore implements EventStore {
  constructor(protected readonly x: KyselyAccess) {}

  async getEvent(accountId: string, id: string): Promise<EventRow | undefined> {
    if (this.x.unmatchable(accountId, id)) return undefined;
    const row = await this.x.read('getEvent', () =>
      this.x.db.selectFrom('events').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toEvent(row);
  }

  async listEvents(accountId: string, filter: EventFilter, limit: number, cursor?: string): Promise<Page<EventRow>> {
    if (this.x.unmatchable(accountId, cursor, filter.type, filter.typePrefix, filter.actorId, filter.ip, filter.tag)) return { items: [], nextCursor: null };
    if (filter.sort !== undefined && cursor !== undefined && readSortCursor(cursor) === undefined) return { items: [], nextCursor: null };
    const rows = await this.x.read('listEvents', () => this.eventPage(accountId, filter, limit + 1, cursor));
    const page = pageOf(rows, limit, toEvent);
    const sort = filter.sort;
    if (sort === undefined || page.nextCursor === null) return page;
    const last = page.items[page.items.length - 1] as EventRow;
    return { items: page.items, nextCursor: writeSortCursor(sort.endsWith('risk') ? last.riskScore : last.occurredAt, last.id) };
  }

  /** The account's events that pass the filter and follow the cursor, in the filter's order. */
  protected eventPage(accountId: string, filter: EventFilter, limit: number, cursor: string | undefined): Promise<Row<'events'>[]> {
    return sql<Row<'events'>>`select * from events where account_id = ${accountId} and ${this.eventConditions(accountId, filter, cursor)}
      ${this.eventOrder(filter.sort)} limit ${limit}`
      .execute(this.x.db)
      .then((r) => r.rows);
  }

  async eventHistogram(accountId: string, filter: EventFilter, from: number, bucketMs: number, buckets: number): Promise<number[]> {
    if (this.x.unmatchable(accountId, filter.type, filter.typePrefix, filter.actorId, filter.ip, filter.tag)) return bucketCounts([], buckets);
    const until = from + bucketMs * buckets;
    const inRange = { ...filter, since: Math.max(from, filter.since ?? from), until: Math.min(until, filter.until ?? until) };
    const rows = await this.x.read('eventHistogram', () =>
      sql<{ b: number | string; n: number | string }>`select ${bucketOf(this.x.kind, 'occurred_at', from, bucketMs)} as b, count(*) as n from events
        where account_id = ${accountId} and ${this.eventConditions(accountId, inRange, undefined)} group by b`
        .execute(this.x.db)
        .then((r) => r.rows),
    );
    return bucketCounts(rows, buckets);
  }

  /** The ORDER BY of a sort: its column and then id, both the same way. */
  protected eventOrder(sort: EventSort | undefined): RawBuilder<unknown> {
    if (sort === undefined) return sql`order by events.id desc`;
    const column = sql.ref(`events.${SORT_COLUMN[sort]}`);
    return sort.startsWith('-') ? sql`order by ${column} desc, events.id desc` : sql`order by ${column} asc, events.id asc`;
  }

  /** The filter and cursor as one condition on unqualified events columns other than account_id. */
  protected eventConditions(accountId: string, filter: EventFilter, cursor: string | undefined): RawBuilder<boolean> {
    const parts: RawBuilder<unknown>[] = [];
    if (filter.type !== undefined) parts.push(sql`type = ${filter.type}`);
    if (filter.typePrefix !== undefined) parts.push(sql`type like ${likeLiteral(filter.typePrefix) + '%'} escape '\\'`);
    if (filter.actorId !== undefined) parts.push(sql`actor_id = ${filter.actorId}`);
    if (filter.ip !== undefined) parts.push(sql`ip = ${filter.ip}`);
    if (filter.minRisk !== undefined) parts.push(sql`risk_score >= ${filter.minRisk}`);
    if (filter.since !== undefined) parts.push(sql`occurred_at >= ${filter.since}`);
    if (filter.until !== undefined) parts.push(sql`occurred_at < ${filter.until}`);
    if (filter.tag !== undefined) parts.push(this.hasTag(filter.tag));
    if (filter.query) parts.push(searchCondition(filter.query, 'events', this.x.kind, accountId));
    if (cursor !== undefined) parts.push(cursorCondition(filter.sort, cursor));
    return parts.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`${sql.join(parts, sql` and `)}`;
  }

  /** Rows whose JSON `tags` array holds this exact tag. */
  protected hasTag(tag: string): RawBuilder<boolean> {
    return sql<boolean>`tags like ${'%' + likeLiteral(JSON.stringify(tag)) + '%'} escape '\\'`;
  }

  async countEvents(accountId: string): Promise<number> {
    if (this.x.unmatchable(accountId)) return 0;
    const row = await this.x.read('countEvents', () =>
      this.x.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    );
    return num(row.n);
  }

  async countEventsBetween(accountId: string, since: number, until: number, max: number): Promise<number> {
    if (this.x.unmatchable(accountId)) return 0;
    // The (account_id, occurred_at) index answers the range; the inner LIMIT bounds the walk.
    const row = await this.x.read('countEventsBetween', () =>
      sql<{ n: number | string | bigint }>`select count(*) as n from (select 1 from events where account_id = ${accountId}
        and occurred_at >= ${since} and occurred_at < ${until} limit ${max}) as counted`
        .execute(this.x.db)
        .then((r) => r.rows[0]),
    );
    return row === undefined ? 0 : num(row.n);
  }

  async findIdempotency(accountId: string, eventIds: readonly string[], since: number): Promise<ReadonlyMap<string, IdempotencyRow>> {
    const found = new Map<string, IdempotencyRow>();
    const ids = eventIds.filter((id) => !this.x.unmatchable(accountId, id));
    for (let from = 0; from < ids.length; from += IDEMPOTENCY_LOOKUP_CHUNK) {
      const chunk = ids.slice(from, from + IDEMPOTENCY_LOOKUP_CHUNK);
      const rows = await this.x.read('findIdempotency', () =>
        this.x.db
          .selectFrom('idempotency')
          .selectAll()
          .where('account_id', '=', accountId)
          .where('event_id', 'in', chunk)
          .where('created_at', '>=', since)
          .execute(),
      );
      for (const row of rows) found.set(row.event_id, toIdempotency(row));
    }
    return found;
  }

  async pruneEvents(accountId: string, before: number): Promise<number> {
    if (this.x.unmatchable(accountId)) return 0;
    const result = await this.x.guard('pruneEvents', () =>
      this.x.db.deleteFrom('events').where('account_id', '=', accountId).where('received_at', '<', before).executeTakeFirst(),
    );
    return num(result.numDeletedRows);
  }

  async pruneIdempotency(before: number): Promise<number> {
    const result = await this.x.guard('pruneIdempotency', () => this.x.db.deleteFrom('idempotency').where('created_at', '<', before).executeTakeFirst());
    return num(result.numDeletedRows);
  }

  async dropEventsBefore(before: number): Promise<{ readonly partitionsDropped: number; readonly rowsDeleted: number }> {
    const result = await this.x.guard('dropEventsBefore', () => this.x.db.deleteFrom('events').where('received_at', '<', before).executeTakeFirst());
    return { partitionsDropped: 0, rowsDeleted: num(result.numDeletedRows) };
  }
}
