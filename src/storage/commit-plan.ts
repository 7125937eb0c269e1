import type { AlertWrite, CommitBatch, IdempotencyRow } from './types.js';

/**
 * What a commit group writes, shaped for concurrent writers: groups from several instances
 * touch the same usage, alert and idempotency rows, so each kind is written in one key order
 * (two transactions locking rows in opposite orders would deadlock), usage is summed per row
 * (one upsert may not touch a row twice) and only the last idempotency row per key is kept.
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
 * One write per alert: an alert that many events of the group updated (a brute force in
 * progress updates it on every attempt) is written once, with its furthest state (the highest
 * count; each write carries the alert's whole state), inserted if any write opened it.
 */
function latestPerAlert(writes: readonly AlertWrite[]): Map<string, AlertWrite> {
  const latest = new Map<string, AlertWrite>();
  for (const w of writes) {
    const prev = latest.get(w.alert.id);
    if (prev === undefined) latest.set(w.alert.id, w);
    else latest.set(w.alert.id, { alert: w.alert.count >= prev.alert.count ? w.alert : prev.alert, opened: prev.opened || w.opened });
  }
  return latest;
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
    alerts: batch.alerts.length > 1 ? sortedKeys(latestPerAlert(batch.alerts)) : batch.alerts,
    monthly: sortedKeys(monthly),
    daily: sortedKeys(daily),
    idempotency: sortedKeys(lastPerKey),
  };
}
