/**
 * What a commit group writes, described once: the rows of each table and how each table takes
 * them (insert, upsert replacing, upsert adding, insert-or-update of alerts), plus the outbox
 * rule for alert rows (webhooks/outbox.ts). Each backend executes the plan its own way: SQLite
 * with statements prepared from TABLE_WRITES on the writer thread (sqlite-writes.ts),
 * PostgreSQL with one statement per table (postgres-commit.ts). Adding something a commit
 * writes means a member of CommitBatch (types.ts), its table here, and a migration.
 */
import type { AlertRow, AlertWrite, CommitBatch, IdempotencyRow } from './types.js';
import { docTextOf } from './types.js';
import type { AlertsTable, Database } from './schema.js';
import { jsonOf } from '../util/json-text.js';
import { eventSearchText } from './search-text.js';

/** The PostgreSQL type of a column, for array parameters. */
export type ColumnType = 'text' | 'int8' | 'int4';

/** How a table takes its rows. */
export interface TableWrite {
  readonly table: keyof Database;
  /** Column names and types, in the order of each row's values. */
  readonly columns: readonly (readonly [string, ColumnType])[];
  /** Unique key of an upsert: a row that exists is updated, `replace`d or `add`ed to. */
  readonly upsert?: { readonly key: readonly string[]; readonly replace?: readonly string[]; readonly add?: readonly string[] };
}

/** The tables a commit writes and how, in the order they are written. */
export const TABLE_WRITES = {
  events: {
    table: 'events',
    columns: [
      ['id', 'text'],
      ['account_id', 'text'],
      ['type', 'text'],
      ['event_id', 'text'],
      ['occurred_at', 'int8'],
      ['received_at', 'int8'],
      ['actor_id', 'text'],
      ['ip', 'text'],
      ['risk_score', 'int4'],
      ['tags', 'text'],
      ['doc', 'text'],
    ],
  },
  idempotency: {
    table: 'idempotency',
    columns: [
      ['account_id', 'text'],
      ['event_id', 'text'],
      ['response', 'text'],
      ['created_at', 'int8'],
      ['payload_digest', 'text'],
    ],
    upsert: { key: ['account_id', 'event_id'], replace: ['response', 'created_at', 'payload_digest'] },
  },
  /** An opened alert is inserted; an update sets ALERT_UPDATE of the row with its id and account. */
  alerts: {
    table: 'alerts',
    columns: [
      ['id', 'text'],
      ['account_id', 'text'],
      ['type', 'text'],
      ['severity', 'text'],
      ['subject', 'text'],
      ['status', 'text'],
      ['count', 'int4'],
      ['first_seen', 'int8'],
      ['last_seen', 'int8'],
      ['actor_id', 'text'],
      ['event_ids', 'text'],
      ['details', 'text'],
    ],
  },
  monthly: {
    table: 'usage_monthly',
    columns: [
      ['account_id', 'text'],
      ['period', 'text'],
      ['used', 'int8'],
      ['dropped', 'int8'],
    ],
    upsert: { key: ['account_id', 'period'], add: ['used', 'dropped'] },
  },
  daily: {
    table: 'usage_daily',
    columns: [
      ['account_id', 'text'],
      ['day', 'text'],
      ['used', 'int8'],
      ['dropped', 'int8'],
    ],
    upsert: { key: ['account_id', 'day'], add: ['used', 'dropped'] },
  },
} as const satisfies Record<string, TableWrite>;

/**
 * The clause that makes an insert into this table an upsert, the same text for SQLite and
 * PostgreSQL; empty for a plain insert.
 */
export function conflictClause(write: TableWrite): string {
  if (write.upsert === undefined) return '';
  const set = [
    ...(write.upsert.replace ?? []).map((c) => `${c} = excluded.${c}`),
    ...(write.upsert.add ?? []).map((c) => `${c} = ${write.table}.${c} + excluded.${c}`),
  ];
  return ` on conflict (${write.upsert.key.join(', ')}) do update set ${set.join(', ')}`;
}

/** The columns an alert update sets: a later sighting never changes the rest. */
export const ALERT_UPDATE = ['count', 'last_seen', 'event_ids', 'details', 'severity'] as const satisfies readonly (keyof AlertsTable)[];

/** A row's values, in its table's column order: strings, numbers and nulls only (a cheap structured clone). */
export type RowValues = readonly unknown[];

/**
 * The rows of one commit group, by table of TABLE_WRITES. Shaped for concurrent writers: groups
 * from several instances touch the same usage, alert and idempotency rows, so each kind is
 * written in one key order (two transactions locking rows in opposite orders would deadlock),
 * usage is summed per row (one upsert may not touch a row twice) and only the last idempotency
 * row per key is kept. An alert updated by several events of one group is written once, in its
 * last state.
 */
export interface CommitPlan {
  readonly events: readonly RowValues[];
  /** Each event's text for the full-text and trigram indexes, by the events' order (SQLite writes it into both index tables; PostgreSQL into the row's search_text). */
  readonly eventTexts: readonly string[];
  readonly idempotency: readonly RowValues[];
  /** In key order; an alert opened and updated in one group is one insert. */
  readonly alerts: readonly { readonly opened: boolean; readonly row: RowValues }[];
  readonly monthly: readonly RowValues[];
  readonly daily: readonly RowValues[];
  /** When the group is committed: the time its webhook deliveries are created and due (0 without alerts). */
  readonly at: number;
}

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sum(rows: Map<string, [string, string, number, number]>, account: string, period: string, used: number, dropped: number): void {
  const key = `${account}\u0000${period}`;
  const row = rows.get(key);
  if (row === undefined) rows.set(key, [account, period, used, dropped]);
  else {
    row[2] += used;
    row[3] += dropped;
  }
}

/**
 * Writes of one alert are adjacent after the sort, in event order. An update sets only count,
 * last_seen, event_ids, details and severity, so within one transaction it supersedes an earlier
 * one, and an update that follows the insert can be folded into it: one statement and one
 * event-ids JSON instead of one per event (a busy alert carries up to 100 event ids and is
 * updated by most events of a group). Of two states the one with the higher count wins, since
 * two interleaved requests can hand theirs in out of order. Two inserts of one id stay two (the
 * second must still fail as a duplicate).
 */
function lastStates(sorted: readonly AlertWrite[]): AlertWrite[] {
  const out: AlertWrite[] = [];
  for (const write of sorted) {
    const previous = out[out.length - 1];
    if (write.opened || previous === undefined || previous.alert.id !== write.alert.id || previous.alert.accountId !== write.alert.accountId) {
      out.push(write);
      continue;
    }
    const { count, lastSeen, eventIds, details, severity } = write.alert.count >= previous.alert.count ? write.alert : previous.alert;
    out[out.length - 1] = { opened: previous.opened, alert: Object.assign({}, previous.alert, { count, lastSeen, eventIds, details, severity }) };
  }
  return out;
}

/** The time a commit group is written: its newest event's arrival (the clock of the instance that took it). */
export function commitTime(batch: CommitBatch): number {
  let at = 0;
  for (const e of batch.events) if (e.receivedAt > at) at = e.receivedAt;
  if (at === 0) for (const a of batch.alerts) if (a.alert.lastSeen > at) at = a.alert.lastSeen;
  return at;
}

const alertValues = (a: AlertRow): RowValues => [
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
];

/** An alert row's values as the row object the outbox rule reads. */
export function alertRowFrom(values: RowValues): AlertsTable {
  const [id, account_id, type, severity, subject, status, count, first_seen, last_seen, actor_id, event_ids, details] = values as [
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

export function planCommit(batch: CommitBatch): CommitPlan {
  const monthly = new Map<string, [string, string, number, number]>();
  const daily = new Map<string, [string, string, number, number]>();
  for (const u of batch.usage) {
    sum(monthly, u.accountId, u.period, u.used, u.dropped);
    sum(daily, u.accountId, u.day, u.used, u.dropped);
  }
  const lastPerKey = new Map<string, IdempotencyRow>();
  for (const r of batch.idempotency) lastPerKey.set(`${r.accountId}\u0000${r.eventId}`, r);
  const sortedKeys = <T>(m: Map<string, T>): T[] => [...m.keys()].sort(byKey).map((k) => m.get(k) as T);
  // Stable: an alert opened and then updated in the same group keeps that order.
  const alerts =
    batch.alerts.length > 1
      ? lastStates([...batch.alerts].sort((a, b) => byKey(a.alert.accountId, b.alert.accountId) || byKey(a.alert.id, b.alert.id)))
      : batch.alerts;
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
    eventTexts: batch.events.map((e) => ('searchText' in e ? e.searchText : eventSearchText(e.doc))),
    idempotency: sortedKeys(lastPerKey).map((r) => [r.accountId, r.eventId, jsonOf(r.response), r.createdAt, r.payloadDigest]),
    alerts: alerts.map((w) => ({ opened: w.opened, row: alertValues(w.alert) })),
    monthly: sortedKeys(monthly),
    daily: sortedKeys(daily),
    at: alerts.length > 0 ? commitTime(batch) : 0,
  };
}
