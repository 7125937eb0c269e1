import { planNamed, type PlanTable } from '../limits/plans.js';
import type { Store } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import { DAY_MS } from '../util/duration.js';

export const IDEMPOTENCY_DAYS = 7;
/** Finished webhook deliveries (delivered or failed) stay listed this long. */
export const WEBHOOK_DELIVERY_DAYS = 30;

export interface RetentionReport {
  readonly partitionsDropped: number;
  readonly rowsDeleted: number;
  readonly idempotencyDeleted: number;
  readonly deliveriesDeleted: number;
  readonly auditDeleted: number;
}

/**
 * One retention pass: whole partitions past the longest retention first (cheap on
 * PostgreSQL), then each account's rows and audit entries past its own plan's retention, then idempotency
 * keys older than 7 days and finished webhook deliveries older than 30. Idempotent and safe to run from every instance.
 */
export async function pruneOnce(store: Store, plans: PlanTable, now: number): Promise<RetentionReport> {
  await store.maintain(now);
  const longest = Math.max(...Object.values(plans).map((plan) => plan.capabilities.retentionDays));
  const dropped = await store.events.dropEventsBefore(now - longest * DAY_MS);
  let rowsDeleted = dropped.rowsDeleted;
  // Entries of no account (failed sign-ins of unknown emails) are kept as long as any plan keeps anything.
  let auditDeleted = await store.audit.prune('', now - longest * DAY_MS);
  for (const account of await store.accounts.listAccounts()) {
    // An account whose plan the table no longer has keeps the longest retention: editing the
    // plans file never deletes a customer's events sooner than any plan would.
    const plan = planNamed(plans, account.plan);
    if (plan === undefined) continue;
    const before = now - plan.capabilities.retentionDays * DAY_MS;
    rowsDeleted += await store.events.pruneEvents(account.id, before);
    auditDeleted += await store.audit.prune(account.id, before);
  }
  const idempotencyDeleted = await store.events.pruneIdempotency(now - IDEMPOTENCY_DAYS * DAY_MS);
  const deliveriesDeleted = await store.webhooks.pruneFinishedDeliveries(now - WEBHOOK_DELIVERY_DAYS * DAY_MS);
  return { partitionsDropped: dropped.partitionsDropped, rowsDeleted, idempotencyDeleted, deliveriesDeleted, auditDeleted };
}

/** Runs pruneOnce at start and then every `everyMs`; failures are logged, never fatal. */
export function scheduleRetention(
  store: Store,
  plans: PlanTable,
  clock: Clock,
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void },
  everyMs = 60 * 60 * 1000,
): () => void {
  const run = async () => {
    try {
      const report = await pruneOnce(store, plans, clock.now());
      if (report.rowsDeleted + report.partitionsDropped + report.idempotencyDeleted + report.deliveriesDeleted + report.auditDeleted > 0)
        log.info({ ...report }, 'retention pass');
    } catch (err) {
      log.warn({ err }, 'retention pass failed; will retry');
    }
  };
  const first = setTimeout(run, 5_000);
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
