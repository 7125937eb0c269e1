import type Database from 'better-sqlite3';
import { ALERT_UPDATE, conflictClause, TABLE_WRITES, type CommitPlan, type RowValues, type TableWrite } from './commit-plan.js';
import type { AlertsTable } from './schema.js';
import { hourOf, SummaryHours } from './event-hours.js';
import { alertWriteOutbox, DELIVERY_COLUMNS, OUTBOX_ENDPOINT_COLUMNS, type OutboxEndpoint, type OutboxReads } from './webhooks/outbox.js';

/** The statement that writes one row of a table of the plan. */
const insertSql = (write: TableWrite): string =>
  `insert into ${write.table} (${write.columns.map(([c]) => c).join(', ')}) values (${write.columns.map(() => '?').join(', ')})${conflictClause(write)}`;

const alertColumns = TABLE_WRITES.alerts.columns.map(([c]) => c as string);
const alertIndex = (column: string): number => alertColumns.indexOf(column);
/** Where the update statement's parameters are in an alert row's values: the columns set, then the key. */
const ALERT_UPDATE_PARAMS = [...ALERT_UPDATE, 'id', 'account_id'].map(alertIndex);

const SQL = {
  event: insertSql(TABLE_WRITES.events),
  eventText: 'insert into events_fts (rowid, text) values (?, ?)',
  eventTrigrams: 'insert into events_trigram (rowid, text) values (?, ?)',
  idempotency: insertSql(TABLE_WRITES.idempotency),
  alertOpen: insertSql(TABLE_WRITES.alerts),
  alertUpdate: `update alerts set ${ALERT_UPDATE.map((c) => `${c} = ?`).join(', ')} where id = ? and account_id = ?`,
  monthly: insertSql(TABLE_WRITES.monthly),
  daily: insertSql(TABLE_WRITES.daily),
  actorHour: 'insert or ignore into event_actor_hours (account_id, actor, hour) values (?, ?, ?)',
  ipHour: 'insert or ignore into event_ip_hours (account_id, address, hour) values (?, ?, ?)',
  hoursEpoch: 'select epoch from event_hours_epoch where id = 1',
  webhookEndpoints: `select ${OUTBOX_ENDPOINT_COLUMNS.join(', ')} from webhook_endpoints where account_id = ? and enabled = 1`,
  alertRow: 'select * from alerts where id = ? and account_id = ?',
  delivery: `insert into webhook_deliveries (${DELIVERY_COLUMNS.join(', ')}) values (${DELIVERY_COLUMNS.map(() => '?').join(', ')})`,
} as const;

/** Usage rows ([account, period or day, used, dropped]) of every group, summed per account and period. */
function sumUsage(groups: readonly CommitPlan[], rowsOf: (w: CommitPlan) => readonly RowValues[]): RowValues[] {
  if (groups.length === 1) return rowsOf(groups[0] as CommitPlan) as RowValues[];
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
 * Executes commit plans (commit-plan.ts) with statements prepared once (preparing is a parse,
 * and it cost as much as the insert it prepared). The same writer runs on the caller's connection (in-memory
 * databases) or on the writer thread's own connection (files): one SQL path either way.
 * Contention-free rows first; the rows other groups also update (alerts, usage) last.
 */
export class SqliteBatchWriter {
  private readonly statements: { readonly [K in keyof typeof SQL]: Database.Statement };
  private readonly writeAll: (groups: readonly CommitPlan[]) => void;
  private readonly summaryHours = new SummaryHours();

  constructor(db: Database.Database) {
    this.statements = Object.fromEntries(Object.entries(SQL).map(([name, text]) => [name, db.prepare(text)])) as SqliteBatchWriter['statements'];
    const s = this.statements;
    const run = (statement: Database.Statement, rows: readonly RowValues[]) => {
      for (const params of rows) statement.run(params);
    };
    // IMMEDIATE takes the write lock at BEGIN: a deferred transaction could fail to upgrade
    // its read lock when another connection writes first, and that failure is not retryable.
    const epoch = s.hoursEpoch.pluck();
    this.writeAll = db.transaction((groups: readonly CommitPlan[]) => {
      this.summaryHours.sync(epoch.get() as number);
      for (const w of groups) {
        for (let i = 0; i < w.events.length; i++) {
          const event = w.events[i] as RowValues;
          const rowid = s.event.run(event).lastInsertRowid;
          s.eventText.run(rowid, w.eventTexts[i]);
          s.eventTrigrams.run(rowid, w.eventTexts[i]);
          this.summarise(event);
        }
        run(s.idempotency, w.idempotency);
        const reads = this.outboxReads();
        for (const alert of w.alerts) {
          const deliveries = alertWriteOutbox(alert, w.at, reads);
          if (alert.opened) s.alertOpen.run(alert.row);
          else s.alertUpdate.run(ALERT_UPDATE_PARAMS.map((i) => alert.row[i]));
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

  /** The outbox rule's reads, on the writer's connection; each account's endpoints once per group. */
  private outboxReads(): OutboxReads {
    const endpointsOf = new Map<string, readonly OutboxEndpoint[]>();
    return {
      endpoints: (accountId) => {
        let endpoints = endpointsOf.get(accountId);
        if (endpoints === undefined) {
          endpoints = this.statements.webhookEndpoints.all(accountId) as OutboxEndpoint[];
          endpointsOf.set(accountId, endpoints);
        }
        return endpoints;
      },
      current: (accountId, id) => this.statements.alertRow.get(id, accountId) as AlertsTable | undefined,
    };
  }

  /** Writes the groups, in order, in one transaction: all or nothing. */
  write(...groups: CommitPlan[]): void {
    try {
      this.writeAll(groups);
    } catch (err) {
      // The rolled-back rows may be remembered as stored.
      this.summaryHours.forget();
      throw err;
    }
  }
}
