import { sql, type RawBuilder } from 'kysely';
import type { EntityStore } from '../store.js';
import type { EntityActivity, EntityAlerts, EntityRef, EntityWindow } from '../types.js';
import { alertRowOf } from '../webhooks/outbox.js';
import { DAY_MS } from '../../util/duration.js';
import { aboutAddress } from './alerts.js';
import { num, type KyselyAccess, type Row } from './access.js';
import { toEvent } from './events.js';

/** Event ids per address query: far below any parameter limit. */
const ADDRESS_LOOKUP_CHUNK = 500;
/** Events and alerts counted per entity summary at most: the counts stop there. */
export const ENTITY_COUNT_CAP = 100_000;
/** The newest events of a summary whose documents are read. */
export const ENTITY_SAMPLE = 2_000;
/** The account's newest events of the window a host is looked for among (no index covers the host). */
export const ENTITY_HOST_SCAN = 50_000;
/**
 * An event's time is at most a day after its arrival (later is refused at ingestion), so an
 * event that happened at or after `since` arrived at or after `since` minus a day: the bound
 * that lets a read by event time use the stores' indexes on arrival time.
 */
export const ARRIVAL_SLACK_MS = DAY_MS;

/**
 * Entity summaries over Kysely. Which rows are the entity's events differs by backend
 * (`entityEvents`): PostgreSQL reads its actor and address indexes, SQLite its hour summaries.
 * A host is the `host` member of the event document, which neither indexes: it is looked for
 * among the account's newest events of the window, in each backend's order of time.
 */
export class KyselyEntityStore implements EntityStore {
  constructor(protected readonly x: KyselyAccess) {}

  async activity(accountId: string, entity: EntityRef, window: EntityWindow): Promise<EntityActivity> {
    if (this.x.unmatchable(accountId, entity.value)) return { buckets: [], sample: [], capped: false };
    const bucket = sql<number>`(occurred_at / cast(${window.bucketMs} as bigint)) * cast(${window.bucketMs} as bigint)`;
    return this.x.read('entityActivity', async () => {
      const [buckets, sample] = await Promise.all([
        sql<{ at: unknown; n: unknown; max_risk: unknown; avg_risk: unknown; first_seen: unknown; last_seen: unknown }>`
          select ${bucket} as at, count(*) as n, max(risk_score) as max_risk, avg(risk_score) as avg_risk,
            min(occurred_at) as first_seen, max(occurred_at) as last_seen
          from (${this.entityEvents(accountId, entity, window, ENTITY_COUNT_CAP)}) as e group by 1 order by 1`.execute(this.x.db),
        sql<Row<'events'>>`select * from (${this.entityEvents(accountId, entity, window, ENTITY_SAMPLE)}) as e order by id desc`.execute(this.x.db),
      ]);
      const counts = buckets.rows.map((r) => ({
        at: num(r.at),
        count: num(r.n),
        maxRisk: num(r.max_risk),
        avgRisk: num(r.avg_risk),
        firstSeen: num(r.first_seen),
        lastSeen: num(r.last_seen),
      }));
      return { buckets: counts, sample: sample.rows.map(toEvent), capped: counts.reduce((n, b) => n + b.count, 0) >= ENTITY_COUNT_CAP };
    });
  }

  async alerts(accountId: string, entity: EntityRef, window: EntityWindow, recent: number): Promise<EntityAlerts> {
    if (this.x.unmatchable(accountId, entity.value)) return { total: 0, open: 0, recent: [] };
    const about =
      entity.kind === 'actor'
        ? sql<boolean>`(actor_id = ${entity.value} or subject = ${`actor:${entity.value}`})`
        : entity.kind === 'ip'
          ? aboutAddress(entity.value)
          : sql<boolean>`subject = ${`host:${entity.value}`}`;
    const inWindow = this.x.db
      .selectFrom('alerts')
      .where('account_id', '=', accountId)
      .where(about)
      .where('last_seen', '>=', window.since)
      .where('first_seen', '<', window.until);
    return this.x.read('entityAlerts', async () => {
      const [counts, rows] = await Promise.all([
        this.x.db
          .selectFrom(inWindow.select('status').limit(ENTITY_COUNT_CAP).as('a'))
          .select((eb) => [eb.fn.countAll().as('n'), sql<unknown>`sum(case when status in ('open', 'acknowledged') then 1 else 0 end)`.as('open')])
          .executeTakeFirst(),
        inWindow.selectAll().orderBy('last_seen', 'desc').orderBy('id', 'desc').limit(recent).execute(),
      ]);
      return { total: num(counts?.n ?? 0), open: num(counts?.open ?? 0), recent: rows.map(alertRowOf) };
    });
  }

  async eventAddresses(accountId: string, eventIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const found = new Map<string, string>();
    const ids = [...new Set(eventIds)].filter((id) => !this.x.unmatchable(accountId, id));
    for (let from = 0; from < ids.length; from += ADDRESS_LOOKUP_CHUNK) {
      const chunk = ids.slice(from, from + ADDRESS_LOOKUP_CHUNK);
      const rows = await this.x.read('eventAddresses', () =>
        this.x.db.selectFrom('events').select(['id', 'ip']).where('account_id', '=', accountId).where('id', 'in', chunk).where('ip', 'is not', null).execute(),
      );
      for (const row of rows) if (row.ip !== null) found.set(row.id, row.ip);
    }
    return found;
  }

  /**
   * The entity's events in the window, at most `limit`, as a subquery of events rows: by the
   * actor and address indexes (account_id, actor_id, id) and (account_id, ip, id), newest first;
   * a host among the account's newest ENTITY_HOST_SCAN events of the window by event time, which
   * (account_id, occurred_at) orders.
   */
  protected entityEvents(accountId: string, entity: EntityRef, window: EntityWindow, limit: number): RawBuilder<Row<'events'>> {
    if (entity.kind === 'host')
      return sql<Row<'events'>>`select * from (select * from events where account_id = ${accountId}
          and occurred_at >= ${window.since} and occurred_at < ${window.until}
          and received_at >= ${window.since - ARRIVAL_SLACK_MS}
          order by occurred_at desc limit ${ENTITY_HOST_SCAN}) as w
        where ${this.hostOf(sql.ref('w.doc'))} = ${entity.value} limit ${limit}`;
    const column = sql.ref(entity.kind === 'actor' ? 'actor_id' : 'ip');
    return sql<Row<'events'>>`select * from events where account_id = ${accountId} and ${column} = ${entity.value}
      and occurred_at >= ${window.since} and occurred_at < ${window.until}
      and received_at >= ${window.since - ARRIVAL_SLACK_MS}
      order by id desc limit ${limit}`;
  }

  /** The `host` member of an event document (JSON text). */
  protected hostOf(doc: RawBuilder<unknown> | ReturnType<typeof sql.ref>): RawBuilder<string> {
    return sql<string>`(${doc}::jsonb ->> 'host')`;
  }
}
