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

const NO_USAGE: readonly UsageDelta[] = Object.freeze([]);
const NOTHING: QuotaDecision = Object.freeze({ accepted: 0, dropped: 0 });

/**
 * Every member is written here in one fixed order: a reservation made by spreading the decision
 * and adding members takes a slow path on Node 20 (docs/internals/performance.md, "Node 20's slow paths").
 */
class Reservation implements QuotaReservation {
  readonly accepted: number;
  readonly dropped: number;
  readonly usage: readonly UsageDelta[];

  constructor(
    private readonly quota: QuotaCounter,
    private readonly accountId: string,
    readonly period: string,
    now: number,
    decision: QuotaDecision,
  ) {
    this.accepted = decision.accepted;
    this.dropped = decision.dropped;
    this.usage = this.counted ? [{ accountId, period, day: dayOf(now), used: decision.accepted, dropped: decision.dropped }] : NO_USAGE;
  }

  private get counted(): boolean {
    return this.accepted + this.dropped > 0;
  }

  async release(): Promise<void> {
    if (this.counted) await this.quota.release(this.accountId, this.period, { accepted: this.accepted, dropped: this.dropped });
  }
}

export function createQuotaStage(quota: QuotaCounter): QuotaStage {
  return async (ctx, events, now) => {
    const accountId = ctx.account.id;
    const period = monthOf(now);
    const decision = events > 0 ? await quota.reserve(accountId, period, events, ctx.plan) : NOTHING;
    return new Reservation(quota, accountId, period, now, decision);
  };
}
