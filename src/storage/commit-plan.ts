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
    alerts: batch.alerts.length > 1 ? [...batch.alerts].sort((a, b) => byKey(a.alert.id, b.alert.id)) : batch.alerts,
    monthly: sortedKeys(monthly),
    daily: sortedKeys(daily),
    idempotency: sortedKeys(lastPerKey),
  };
}
