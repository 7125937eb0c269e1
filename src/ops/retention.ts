import { Type } from '@sinclair/typebox';
import { planNamed, type PlanTable } from '../limits/plans.js';
import type { Account, Plan } from '../event/account.js';
import { schemaCheck, type Problem } from '../util/schema-check.js';
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
  readonly alertsDeleted: number;
  /** Suppression-list rows past their end (they no longer suppress; the pass only removes them). */
  readonly suppressionsDeleted: number;
}

/** The kinds of data an account sets its own retention for, each at most its plan's `retention_days`. */
export const RETENTION_CLASSES = ['events', 'alerts', 'audit'] as const;
export type RetentionClass = (typeof RETENTION_CLASSES)[number];

/** The `retention` part of account settings: days per kind of data; a kind left out keeps the plan's days. */
export type RetentionSettings = { readonly [K in RetentionClass as `${K}_days`]?: number };

const RetentionSchema = Type.Object(
  {
    events_days: Type.Optional(Type.Integer({ minimum: 1 })),
    // Detection remembers an open alert for up to its longest window (7 days): a sighting after the row is gone would update nothing.
    alerts_days: Type.Optional(Type.Integer({ minimum: 7 })),
    audit_days: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  {
    additionalProperties: false,
    unknownMessage: 'retention has the members events_days, alerts_days and audit_days',
    message: 'retention must be an object, e.g. {"events_days": 30, "alerts_days": 90}',
  },
);
const checkRetention = schemaCheck(RetentionSchema, 'retention');

/** Validates the `retention` part against the plan: every problem, each naming its field and the plan's limit. */
export function validateRetentionSettings(value: unknown, plan: Plan): { ok: true; value: RetentionSettings } | { ok: false; errors: readonly Problem[] } {
  const checked = checkRetention(value);
  if (!checked.ok) return checked;
  const max = plan.capabilities.retentionDays;
  const errors: Problem[] = [];
  for (const kind of RETENTION_CLASSES) {
    const days = checked.value[`${kind}_days`];
    if (days !== undefined && days > max)
      errors.push({ field: `retention.${kind}_days`, message: `retention.${kind}_days is ${days}, more than the ${max} days the ${plan.name} plan keeps` });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: checked.value };
}

/**
 * Days each kind of data of the account is kept: its own setting within its plan's days, else the
 * plan's. A setting above the plan (the plan changed since) keeps the plan's days; an unreadable
 * setting keeps the plan's too.
 */
export function retentionDaysOf(account: Pick<Account, 'settings'>, planDays: number): Record<RetentionClass, number> {
  const part = account.settings.retention;
  const checked = part === undefined ? undefined : checkRetention(part);
  const own: RetentionSettings = checked?.ok === true ? checked.value : {};
  return {
    events: Math.min(own.events_days ?? planDays, planDays),
    alerts: Math.min(own.alerts_days ?? planDays, planDays),
    audit: Math.min(own.audit_days ?? planDays, planDays),
  };
}

/**
 * One retention pass: whole partitions past the longest retention first (cheap on
 * PostgreSQL), then each account's events, alerts and audit entries past its own retention of
 * each (retentionDaysOf: its settings within its plan's days), then idempotency
 * keys older than 7 days, finished webhook deliveries older than 30 and expired suppressions. Idempotent and safe to run from every instance.
 */
export async function pruneOnce(store: Store, plans: PlanTable, now: number): Promise<RetentionReport> {
  await store.maintain(now);
  const longest = Math.max(...Object.values(plans).map((plan) => plan.capabilities.retentionDays));
  const dropped = await store.events.dropEventsBefore(now - longest * DAY_MS);
  let rowsDeleted = dropped.rowsDeleted;
  // Entries of no account (failed sign-ins of unknown emails) are kept as long as any plan keeps anything.
  let auditDeleted = await store.audit.prune('', now - longest * DAY_MS);
  let alertsDeleted = 0;
  for (const account of await store.accounts.listAccounts()) {
    // An account whose plan the table no longer has keeps the longest retention: editing the
    // plans file never deletes a customer's events sooner than any plan would.
    const plan = planNamed(plans, account.plan);
    if (plan === undefined) continue;
    const days = retentionDaysOf(account, plan.capabilities.retentionDays);
    rowsDeleted += await store.events.pruneEvents(account.id, now - days.events * DAY_MS);
    alertsDeleted += await store.alerts.pruneAlerts(account.id, now - days.alerts * DAY_MS);
    auditDeleted += await store.audit.prune(account.id, now - days.audit * DAY_MS);
  }
  const idempotencyDeleted = await store.events.pruneIdempotency(now - IDEMPOTENCY_DAYS * DAY_MS);
  const deliveriesDeleted = await store.webhooks.pruneFinishedDeliveries(now - WEBHOOK_DELIVERY_DAYS * DAY_MS);
  const suppressionsDeleted = await store.subjects.pruneSuppressions(now);
  return { partitionsDropped: dropped.partitionsDropped, rowsDeleted, idempotencyDeleted, deliveriesDeleted, auditDeleted, alertsDeleted, suppressionsDeleted };
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
      if (
        report.rowsDeleted +
          report.partitionsDropped +
          report.idempotencyDeleted +
          report.deliveriesDeleted +
          report.auditDeleted +
          report.alertsDeleted +
          report.suppressionsDeleted >
        0
      )
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
