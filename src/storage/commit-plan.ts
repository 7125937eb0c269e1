import type { AlertWrite, CommitBatch, IdempotencyRow } from './types.js';

/**
 * What a commit group writes, shaped for concurrent writers: groups from several instances
 * touch the same usage, alert and idempotency rows, so each kind is written in one key order
 * (two transactions locking rows in opposite orders would deadlock), usage is summed per row
 * (one upsert may not touch a row twice) and only the last idempotency row per key is kept.
 * An alert updated by several events of one group is written once, in its last state.
 */
export interface CommitPlan {
  readonly alerts: readonly AlertWrite[];
  readonly monthly: readonly { account_id: string; period: string; used: number; dropped: number }[];
  readonly daily: readonly { account_id: string; day: string; used: number; dropped: number }[];
  readonly idempotency: readonly IdempotencyRow[];
}

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sum(
  rows: Map<string, { used: number; dropped: number }>,
  key: string,
  make: () => { used: number; dropped: number },
  used: number,
  dropped: number,
): void {
  const row = rows.get(key) ?? make();
  row.used += used;
  row.dropped += dropped;
  rows.set(key, row);
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

export function planCommit(batch: CommitBatch): CommitPlan {
  const monthly = new Map<string, { account_id: string; period: string; used: number; dropped: number }>();
  const daily = new Map<string, { account_id: string; day: string; used: number; dropped: number }>();
  for (const u of batch.usage) {
    sum(monthly, `${u.accountId}\u0000${u.period}`, () => ({ account_id: u.accountId, period: u.period, used: 0, dropped: 0 }), u.used, u.dropped);
    sum(daily, `${u.accountId}\u0000${u.day}`, () => ({ account_id: u.accountId, day: u.day, used: 0, dropped: 0 }), u.used, u.dropped);
  }
  const lastPerKey = new Map<string, IdempotencyRow>();
  for (const r of batch.idempotency) lastPerKey.set(`${r.accountId}\u0000${r.eventId}`, r);
  const sortedKeys = <T>(m: Map<string, T>): T[] => [...m.keys()].sort(byKey).map((k) => m.get(k) as T);
  return {
    // Stable: an alert opened and then updated in the same group keeps that order.
    alerts:
      batch.alerts.length > 1
        ? lastStates([...batch.alerts].sort((a, b) => byKey(a.alert.accountId, b.alert.accountId) || byKey(a.alert.id, b.alert.id)))
        : batch.alerts,
    monthly: sortedKeys(monthly),
    daily: sortedKeys(daily),
    idempotency: sortedKeys(lastPerKey),
  };
}
