import type { Plan } from '../event/account.js';
import type { UsageRow } from '../storage/types.js';

/** GET /v1/usage body: the month in UTC, counts against the cap, overage and its estimated cost. */
export function usageReport(plan: Plan, usage: UsageRow, daily: readonly { day: string; count: number }[], now: number) {
  const at = new Date(now);
  const start = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
  const end = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  const overage = plan.overage === 'bill' ? Math.max(0, usage.used - plan.monthlyCap) : 0;
  const cost = plan.overageUsdPer1000 === null ? null : Math.round(((overage * plan.overageUsdPer1000) / 1000) * 100) / 100;
  return {
    plan: plan.name,
    period: { start: new Date(start).toISOString(), end: new Date(end).toISOString() },
    used: usage.used,
    cap: plan.monthlyCap,
    remaining: Math.max(0, plan.monthlyCap - usage.used),
    dropped: usage.dropped,
    overage_events: overage,
    estimated_overage_cost_usd: cost,
    overage_policy: plan.overage,
    daily,
  };
}
