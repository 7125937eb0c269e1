import type { Store } from './store.js';

const DAY = 86_400_000;

/** Days each plan keeps events (design 13). Plans not listed keep the longest, so nothing goes early. */
export const RETENTION_DAYS: Readonly<Record<string, number>> = Object.freeze({ free: 7, starter: 30, pro: 90, business: 365 });
/** The event_id replay window (design 3.2). */
export const IDEMPOTENCY_DAYS = 7;

export interface RetentionReport {
  readonly partitionsDropped: number;
  readonly eventsDeleted: number;
  readonly idempotencyDeleted: number;
}

const daysFor = (plan: string, days: Readonly<Record<string, number>>): number => days[plan] ?? Math.max(...Object.values(days));

/**
 * One retention pass, safe to run from every instance (e.g. hourly). Partition upkeep first;
 * then everything older than the longest retention any account has goes at once (whole
 * partitions on PostgreSQL); then accounts on shorter plans lose their older rows; then
 * expired idempotency rows.
 */
export async function runRetention(store: Store, now: number, days: Readonly<Record<string, number>> = RETENTION_DAYS): Promise<RetentionReport> {
  await store.maintain(now);
  const accounts = await store.listAccounts();
  const longest = accounts.reduce((max, a) => Math.max(max, daysFor(a.plan, days)), 0);
  let partitionsDropped = 0;
  let eventsDeleted = 0;
  if (accounts.length > 0) {
    const dropped = await store.dropEventsBefore(now - longest * DAY);
    partitionsDropped = dropped.partitionsDropped;
    eventsDeleted = dropped.rowsDeleted;
  }
  for (const account of accounts) {
    const keep = daysFor(account.plan, days);
    if (keep < longest) eventsDeleted += await store.pruneEvents(account.id, now - keep * DAY);
  }
  const idempotencyDeleted = await store.pruneIdempotency(now - IDEMPOTENCY_DAYS * DAY);
  return { partitionsDropped, eventsDeleted, idempotencyDeleted };
}
