import { sql, type RawBuilder } from 'kysely';
import { hourOf, SUMMARY_HOUR_MS } from './event-hours.js';
import { ARRIVAL_SLACK_MS, ENTITY_HOST_SCAN, KyselyEntityStore } from './kysely/entities.js';
import type { Row } from './kysely/access.js';
import type { EntityRef, EntityWindow } from './types.js';

/**
 * Entity summaries on SQLite: events have no actor, address or event-time index. An actor's or
 * an address's events are found through its hour summary, each hour read through the
 * (account_id, received_at, actor_id, ip) index, as the event list reads them; a host is looked
 * for among the account's newest events by arrival, which that index orders.
 */
export class SqliteEntityStore extends KyselyEntityStore {
  protected override entityEvents(accountId: string, entity: EntityRef, window: EntityWindow, limit: number): RawBuilder<Row<'events'>> {
    const arrived = window.since - ARRIVAL_SLACK_MS;
    if (entity.kind === 'host')
      return sql<Row<'events'>>`select * from (select * from events where account_id = ${accountId} and received_at >= ${arrived}
          order by received_at desc limit ${ENTITY_HOST_SCAN}) as w
        where ${this.hostOf(sql.ref('w.doc'))} = ${entity.value} and w.occurred_at >= ${window.since} and w.occurred_at < ${window.until} limit ${limit}`;
    const hours =
      entity.kind === 'actor'
        ? sql`select hour from event_actor_hours where account_id = ${accountId} and actor = ${entity.value} and hour >= ${hourOf(arrived)}`
        : sql`select hour from event_ip_hours where account_id = ${accountId} and address = ${entity.value} and hour >= ${hourOf(arrived)}`;
    const column = sql.ref(entity.kind === 'actor' ? 'events.actor_id' : 'events.ip');
    // CROSS JOIN keeps the summary the outer loop (see SqliteEventStore.eventPage); the unary +
    // keeps the event-time terms off the (account_id, occurred_at, id) index, which would read
    // the whole window's events once per hour of the summary.
    return sql<Row<'events'>>`select events.* from (${hours}) as h cross join events
      where events.account_id = ${accountId}
        and events.received_at >= h.hour * ${sql.lit(SUMMARY_HOUR_MS)} and events.received_at < (h.hour + 1) * ${sql.lit(SUMMARY_HOUR_MS)}
        and ${column} = ${entity.value} and +events.occurred_at >= ${window.since} and +events.occurred_at < ${window.until}
      order by events.id desc limit ${limit}`;
  }

  protected override hostOf(doc: RawBuilder<unknown> | ReturnType<typeof sql.ref>): RawBuilder<string> {
    return sql<string>`json_extract(${doc}, '$.host')`;
  }
}
