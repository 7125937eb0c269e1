import type Database from 'better-sqlite3';
import { planCommit } from './commit-plan.js';
import { docTextOf, type CommitBatch } from './types.js';
import { jsonOf } from '../util/json-text.js';
import type { AlertsTable, WebhookDeliveriesTable } from './schema.js';
import { hourOf, SummaryHours } from './event-hours.js';
import { anyMatch, commitTime, DELIVERY_COLUMNS, isEscalation, outboxRows, updatedAlert, type OutboxEndpoint } from './webhooks/outbox.js';

/**
 * A commit group as SQLite statement parameters: only strings, numbers and nulls, so it crosses
 * to the writer thread as a cheap structured clone, and all JSON is encoded on the caller's side.
 */
export interface SqliteWrites {
  readonly events: readonly (readonly unknown[])[];
  readonly idempotency: readonly (readonly unknown[])[];
  /** In commit-plan order; an alert opened and updated in one group is inserted first. */
  readonly alerts: readonly { readonly opened: boolean; readonly params: readonly unknown[] }[];
  readonly monthly: readonly (readonly unknown[])[];
  readonly daily: readonly (readonly unknown[])[];
  /** When the group is committed: the time its webhook deliveries are created and due. */
  readonly at: number;
}

export function toSqliteWrites(batch: CommitBatch): SqliteWrites {
  const plan = planCommit(batch);
  return {
    events: batch.events.map((e) => [
      e.id,
      e.accountId,
      e.type,
      e.eventId,
      e.occurredAt,
      e.receivedAt,
      e.actorId,
      e.ip,
      e.riskScore,
      e.tags.length === 0 ? '[]' : JSON.stringify(e.tags),
      docTextOf(e),
    ]),
    idempotency: plan.idempotency.map((r) => [r.accountId, r.eventId, jsonOf(r.response), r.createdAt, r.payloadDigest]),
    alerts: plan.alerts.map(({ alert: a, opened }) => ({
      opened,
      params: opened
        ? [
            a.id,
            a.accountId,
            a.type,
            a.severity,
            a.subject,
            a.status,
            a.count,
            a.firstSeen,
            a.lastSeen,
            a.actorId,
            JSON.stringify(a.eventIds),
            JSON.stringify(a.details),
          ]
        : [a.count, a.lastSeen, JSON.stringify(a.eventIds), JSON.stringify(a.details), a.severity, a.id, a.accountId],
    })),
    monthly: plan.monthly.map((u) => [u.account_id, u.period, u.used, u.dropped]),
    daily: plan.daily.map((u) => [u.account_id, u.day, u.used, u.dropped]),
    at: plan.alerts.length > 0 ? commitTime(batch) : 0,
  };
}

const SQL = {
  event:
    'insert into events (id, account_id, type, event_id, occurred_at, received_at, actor_id, ip, risk_score, tags, doc) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  idempotency:
    'insert into idempotency (account_id, event_id, response, created_at, payload_digest) values (?, ?, ?, ?, ?) ' +
    'on conflict (account_id, event_id) do update set response = excluded.response, created_at = excluded.created_at, payload_digest = excluded.payload_digest',
  alertOpen:
    'insert into alerts (id, account_id, type, severity, subject, status, count, first_seen, last_seen, actor_id, event_ids, details) ' +
    'values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  alertUpdate: 'update alerts set count = ?, last_seen = ?, event_ids = ?, details = ?, severity = ? where id = ? and account_id = ?',
  monthly:
    'insert into usage_monthly (account_id, period, used, dropped) values (?, ?, ?, ?) ' +
    'on conflict (account_id, period) do update set used = usage_monthly.used + excluded.used, dropped = usage_monthly.dropped + excluded.dropped',
  daily:
    'insert into usage_daily (account_id, day, used, dropped) values (?, ?, ?, ?) ' +
    'on conflict (account_id, day) do update set used = usage_daily.used + excluded.used, dropped = usage_daily.dropped + excluded.dropped',
  actorHour: 'insert or ignore into event_actor_hours (account_id, actor, hour) values (?, ?, ?)',
  ipHour: 'insert or ignore into event_ip_hours (account_id, address, hour) values (?, ?, ?)',
  hoursEpoch: 'select epoch from event_hours_epoch where id = 1',
  webhookEndpoints: 'select id, min_severity, alert_types, kill_chains_only from webhook_endpoints where account_id = ? and enabled = 1',
  alertRow: 'select * from alerts where id = ? and account_id = ?',
  delivery: `insert into webhook_deliveries (${DELIVERY_COLUMNS.join(', ')}) values (${DELIVERY_COLUMNS.map(() => '?').join(', ')})`,
} as const;

type AlertWriteParams = SqliteWrites['alerts'][number];

/** The alert row an opening inserts, from its statement parameters. */
function openedRow(p: readonly unknown[]): AlertsTable {
  const [id, account_id, type, severity, subject, status, count, first_seen, last_seen, actor_id, event_ids, details] = p as [
    string,
    string,
    string,
    string,
    string,
    string,
    number,
    number,
    number,
    string | null,
    string,
    string,
  ];
  return { id, account_id, type, severity, subject, status, count, first_seen, last_seen, actor_id, event_ids, details };
}

/** Usage rows ([account, period or day, used, dropped]) of every group, summed per account and period. */
function sumUsage(groups: readonly SqliteWrites[], rowsOf: (w: SqliteWrites) => readonly (readonly unknown[])[]): (readonly unknown[])[] {
  if (groups.length === 1) return rowsOf(groups[0] as SqliteWrites) as (readonly unknown[])[];
  const sums = new Map<string, [unknown, unknown, number, number]>();
  for (const w of groups) {
    for (const [account, period, used, dropped] of rowsOf(w)) {
      const key = `${String(account)}\u0000${String(period)}`;
      const sum = sums.get(key);
      if (sum === undefined) sums.set(key, [account, period, Number(used), Number(dropped)]);
      else {
        sum[2] += Number(used);
        sum[3] += Number(dropped);
      }
    }
  }
  return [...sums.values()];
}

/**
 * Writes commit groups with statements prepared once (preparing is a parse, and it cost as much
 * as the insert it prepared). The same writer runs on the caller's connection (in-memory
 * databases) or on the writer thread's own connection (files): one SQL path either way.
 * Contention-free rows first; the rows other groups also update (alerts, usage) last.
 */
export class SqliteBatchWriter {
  private readonly statements: { readonly [K in keyof typeof SQL]: Database.Statement };
  private readonly writeAll: (groups: readonly SqliteWrites[]) => void;
  private readonly summaryHours = new SummaryHours();

  constructor(db: Database.Database) {
    this.statements = Object.fromEntries(Object.entries(SQL).map(([name, text]) => [name, db.prepare(text)])) as SqliteBatchWriter['statements'];
    const s = this.statements;
    const run = (statement: Database.Statement, rows: readonly (readonly unknown[])[]) => {
      for (const params of rows) statement.run(params);
    };
    // IMMEDIATE takes the write lock at BEGIN: a deferred transaction could fail to upgrade
    // its read lock when another connection writes first, and that failure is not retryable.
    const epoch = s.hoursEpoch.pluck();
    this.writeAll = db.transaction((groups: readonly SqliteWrites[]) => {
      this.summaryHours.sync(epoch.get() as number);
      for (const w of groups) {
        run(s.event, w.events);
        for (const e of w.events) this.summarise(e);
        run(s.idempotency, w.idempotency);
        const endpoints = new Map<string, readonly OutboxEndpoint[]>();
        for (const alert of w.alerts) {
          const deliveries = this.outbox(alert, w.at, endpoints);
          (alert.opened ? s.alertOpen : s.alertUpdate).run(alert.params);
          for (const d of deliveries) s.delivery.run(DELIVERY_COLUMNS.map((c) => d[c]));
        }
      }
      // Usage rows are one per account and period in a group, and hot: summed over every group of
      // the transaction, each is updated once per transaction rather than once per group.
      run(
        s.monthly,
        sumUsage(groups, (w) => w.monthly),
      );
      run(
        s.daily,
        sumUsage(groups, (w) => w.daily),
      );
    }).immediate;
  }

  /**
   * Adds the event's (account, actor, hour) and (account, address, hour) to the summaries
   * unless the writer already knows them stored.
   */
  private summarise(event: readonly unknown[]): void {
    const [, accountId, , , , receivedAt, actorId, ip] = event as [unknown, string, unknown, unknown, unknown, number, string | null, string | null];
    const hour = hourOf(receivedAt);
    if (actorId !== null && !this.summaryHours.has(hour, 'actor', accountId, actorId)) {
      this.statements.actorHour.run(accountId, actorId, hour);
      this.summaryHours.add(hour, 'actor', accountId, actorId);
    }
    if (ip !== null && !this.summaryHours.has(hour, 'ip', accountId, ip)) {
      this.statements.ipHour.run(accountId, ip, hour);
      this.summaryHours.add(hour, 'ip', accountId, ip);
    }
  }

  /**
   * The webhook deliveries an alert write produces, read before the write so an update can be
   * compared with the row it replaces. Accounts without enabled endpoints cost one indexed
   * lookup per group.
   */
  private outbox(write: AlertWriteParams, at: number, endpointsOf: Map<string, readonly OutboxEndpoint[]>): WebhookDeliveriesTable[] {
    const p = write.params;
    const accountId = (write.opened ? p[1] : p[6]) as string;
    let endpoints = endpointsOf.get(accountId);
    if (endpoints === undefined) {
      endpoints = this.statements.webhookEndpoints.all(accountId) as OutboxEndpoint[];
      endpointsOf.set(accountId, endpoints);
    }
    if (endpoints.length === 0) return [];
    if (write.opened) return outboxRows(endpoints, 'alert.opened', openedRow(p), at);
    const [count, last_seen, event_ids, details, severity, id] = p as [number, number, string, string, string, string];
    const previous = this.statements.alertRow.get(id, accountId) as AlertsTable | undefined;
    if (previous === undefined || !anyMatch(endpoints, { type: previous.type, severity })) return [];
    const next = updatedAlert(previous, { count, last_seen, event_ids, details, severity });
    return isEscalation(previous, next) ? outboxRows(endpoints, 'alert.escalated', next, at) : [];
  }

  /** Writes the groups, in order, in one transaction: all or nothing. */
  write(...groups: SqliteWrites[]): void {
    try {
      this.writeAll(groups);
    } catch (err) {
      // The rolled-back rows may be remembered as stored.
      this.summaryHours.forget();
      throw err;
    }
  }
}
