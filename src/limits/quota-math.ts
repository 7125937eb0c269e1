import type { QuotaDecision, QuotaPlan } from './types.js';

/**
 * Splits a request of `events` for an account that has used `used` this month:
 * 'bill' plans take everything (overage is billed), 'drop' plans take what still fits
 * under the cap, in order, and drop the rest. The Redis script mirrors this.
 */
export function splitReservation(used: number, events: number, plan: QuotaPlan): QuotaDecision {
  if (plan.overage === 'bill') return { accepted: events, dropped: 0 };
  const accepted = Math.min(events, Math.max(0, plan.monthlyCap - used));
  return { accepted, dropped: events - accepted };
}
