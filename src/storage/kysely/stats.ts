import { sql } from 'kysely';
import type { StatsStore } from '../store.js';
import type { Overview, TopValue, UsageRow } from '../types.js';
import { ARRIVAL_SLACK_MS } from './entities.js';
import { alertRowOf } from '../webhooks/outbox.js';
import { num, type KyselyAccess } from './access.js';

/** Events of the range the overview aggregates at most, the newest by arrival (see Overview.eventsCapped). */
export const OVERVIEW_EVENTS = 50_000;

/** Actors and addresses ranked per overview list. */
const TOP_VALUES = 10;
/**
 * The actors or addresses read per list before their alerts are counted: the most risky, then
 * the busiest. The list is ranked by risk, then alerts, then volume, so these hold its ten.
 */
const TOP_CANDIDATES = 50;

/** Usage counts and the dashboard overview over Kysely. */
export class KyselyStatsStore implements StatsStore {
  constructor(private readonly x: KyselyAccess) {}

  async getUsage(accountId: string, period: string): Promise<UsageRow> {
    if (this.x.unmatchable(accountId, period)) return { accountId, period, used: 0, dropped: 0 };
    const row = await this.x.read('getUsage', () =>
      this.x.db.selectFrom('usage_monthly').selectAll().where('account_id', '=', accountId).where('period', '=', period).executeTakeFirst(),
    );
    return { accountId, period, used: row ? num(row.used) : 0, dropped: row ? num(row.dropped) : 0 };
  }

  async dailyCounts(accountId: string, since: number): Promise<readonly { day: string; count: number }[]> {
    if (this.x.unmatchable(accountId)) return [];
    const sinceDay = new Date(since).toISOString().slice(0, 10);
    const rows = await this.x.read('dailyCounts', () =>
      this.x.db.selectFrom('usage_daily').select(['day', 'used']).where('account_id', '=', accountId).where('day', '>=', sinceDay).orderBy('day').execute(),
    );
    return rows.map((r) => ({ day: r.day, count: num(r.used) }));
  }

  async overview(accountId: string, since: number, bucketMs: number, maxEvents = OVERVIEW_EVENTS): Promise<Overview> {
    if (this.x.unmatchable(accountId)) return { events: [], alerts: [], openBySeverity: {}, topActors: [], topIps: [], chains: [], eventsCapped: false };
    const bucket = (column: 'occurred_at' | 'first_seen') => sql<number>`(${sql.ref(column)} / cast(${bucketMs} as bigint)) * cast(${bucketMs} as bigint)`;
    // By event time; the bound on arrival lets both stores read their index on it (an event
    // arrives at most ARRIVAL_SLACK_MS before it happens). The newest maxEvents of them at most,
    // by arrival along that index: a busy account's range would otherwise be read whole.
    const newest = this.x.db
      .selectFrom('events')
      .select(['occurred_at', 'actor_id', 'ip', 'risk_score'])
      .where('account_id', '=', accountId)
      .where('received_at', '>=', since - ARRIVAL_SLACK_MS)
      .where('occurred_at', '>=', since)
      .orderBy('received_at', 'desc')
      .limit(maxEvents);
    const recent = this.x.db.selectFrom(newest.as('recent'));
    const top = (column: 'actor_id' | 'ip') =>
      recent
        .select((eb) => [sql<string>`${sql.ref(column)}`.as('value'), eb.fn.countAll().as('n'), eb.fn.max('risk_score').as('max_risk')])
        .where(column, 'is not', null)
        .groupBy(column)
        .orderBy('max_risk', 'desc')
        .orderBy('n', 'desc')
        .orderBy(column)
        .limit(TOP_CANDIDATES)
        .execute();
    return this.x.read('overview', async () => {
      const [events, alerts, open, actors, ips, chains] = await Promise.all([
        recent
          .select((eb) => [bucket('occurred_at').as('at'), eb.fn.countAll().as('n')])
          .groupBy('at')
          .orderBy('at')
          .execute(),
        this.x.db
          .selectFrom('alerts')
          .select((eb) => [bucket('first_seen').as('at'), eb.fn.countAll().as('n')])
          .where('account_id', '=', accountId)
          .where('first_seen', '>=', since)
          .groupBy('at')
          .orderBy('at')
          .execute(),
        this.x.db
          .selectFrom('alerts')
          .select((eb) => ['severity', eb.fn.countAll().as('n')])
          .where('account_id', '=', accountId)
          .where('status', 'in', ['open', 'acknowledged'])
          .groupBy('severity')
          .execute(),
        top('actor_id'),
        top('ip'),
        this.x.db
          .selectFrom('alerts')
          .selectAll()
          .where('account_id', '=', accountId)
          .where('status', 'in', ['open', 'acknowledged'])
          .where(sql<boolean>`type like 'chain.%'`)
          .orderBy('last_seen', 'desc')
          .limit(10)
          .execute(),
      ]);
      const points = (rows: readonly { at: unknown; n: unknown }[]) => rows.map((r) => ({ at: num(r.at), count: num(r.n) }));
      const [actorAlerts, ipAlerts] = await Promise.all([
        this.alertCounts(
          accountId,
          since,
          'actor_id',
          actors.map((r) => r.value),
        ),
        this.alertCounts(
          accountId,
          since,
          'subject',
          ips.map((r) => `ip:${r.value}`),
        ),
      ]);
      const values = (rows: readonly { value: string; n: unknown; max_risk: unknown }[], alertsOf: (value: string) => number): TopValue[] =>
        rows
          .map((r) => ({ value: r.value, count: num(r.n), maxRisk: num(r.max_risk), alerts: alertsOf(r.value) }))
          .sort((a, b) => b.maxRisk - a.maxRisk || b.alerts - a.alerts || b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
          .slice(0, TOP_VALUES);
      const counted = points(events);
      return {
        events: counted,
        alerts: points(alerts),
        openBySeverity: Object.fromEntries(open.map((r) => [r.severity, num(r.n)])),
        topActors: values(actors, (v) => actorAlerts.get(v) ?? 0),
        topIps: values(ips, (v) => ipAlerts.get(`ip:${v}`) ?? 0),
        chains: chains.map(alertRowOf),
        eventsCapped: counted.reduce((sum, p) => sum + p.count, 0) >= maxEvents,
      };
    });
  }

  /** Alerts seen since `since` per value of a column, for the given values only. */
  private async alertCounts(accountId: string, since: number, column: 'actor_id' | 'subject', values: readonly string[]): Promise<ReadonlyMap<string, number>> {
    if (values.length === 0) return new Map();
    const rows = await this.x.db
      .selectFrom('alerts')
      .select((eb) => [sql<string>`${sql.ref(column)}`.as('value'), eb.fn.countAll().as('n')])
      .where('account_id', '=', accountId)
      .where(column, 'in', values)
      .where('last_seen', '>=', since)
      .groupBy(column)
      .execute();
    return new Map(rows.map((r) => [r.value, num(r.n)]));
  }
}
