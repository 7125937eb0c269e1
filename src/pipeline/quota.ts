import type { AccountContext } from '../event/account.js';
import { dayOf, monthOf, type QuotaCounter, type QuotaDecision } from '../limits/types.js';
import type { UsageDelta } from '../storage/types.js';

export interface QuotaReservation extends QuotaDecision {
  readonly period: string;
  /** The usage row this reservation adds to the commit (none when nothing was counted). */
  readonly usage: readonly UsageDelta[];
  /** Gives the reservation back when the events were not stored. */
  release(): Promise<void>;
}

/** Reserves a request's new events in the account's month: the first `accepted` go on, the rest are dropped. */
export type QuotaStage = (ctx: AccountContext, events: number, now: number) => Promise<QuotaReservation>;

export function createQuotaStage(quota: QuotaCounter): QuotaStage {
  return async (ctx, events, now) => {
    const accountId = ctx.account.id;
    const period = monthOf(now);
    const decision = events > 0 ? await quota.reserve(accountId, period, events, ctx.plan) : { accepted: 0, dropped: 0 };
    const counted = decision.accepted + decision.dropped > 0;
    return {
      ...decision,
      period,
      usage: counted ? [{ accountId, period, day: dayOf(now), used: decision.accepted, dropped: decision.dropped }] : [],
      release: async () => {
        if (counted) await quota.release(accountId, period, decision);
      },
    };
  };
}
