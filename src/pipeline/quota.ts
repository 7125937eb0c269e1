import type { AccountContext } from '../event/account.js';
import { dayOf, monthOf, type QuotaCounter, type QuotaDecision } from '../limits/types.js';
import type { UsageDelta } from '../storage/types.js';
import { newId } from '../util/ids.js';
import type { Reserved, Screened } from './request.js';
import type { Stage } from './stage.js';

export interface QuotaReservation extends QuotaDecision {
  readonly period: string;
  /** The usage row this reservation adds to the commit (none when nothing was counted). */
  readonly usage: readonly UsageDelta[];
  /** Gives the reservation back when the events were not stored. */
  release(): Promise<void>;
}

/** Reserves a request's new events in the account's month: the first `accepted` go on, the rest are dropped. */
export type Reserve = (ctx: AccountContext, events: number, now: number) => Promise<QuotaReservation>;

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

export function reserveIn(quota: QuotaCounter): Reserve {
  return async (ctx, events, now) => {
    const accountId = ctx.account.id;
    const period = monthOf(now);
    const decision = events > 0 ? await quota.reserve(accountId, period, events, ctx.plan) : NOTHING;
    return new Reservation(quota, accountId, period, now, decision);
  };
}

/**
 * The month's quota decides which new events go on before any work is spent on them: the first
 * `accepted` are admitted, each under the id it is stored with; the rest are answered `dropped`
 * (counted once the request's commit succeeded). The reservation is the request's to give back.
 */
export function quotaStage(reserve: Reserve): Stage<Screened, Reserved> {
  return async (request) => {
    const { seen, now } = request;
    const { results } = seen;
    const fresh = request.unsuppressed;
    const quota = await reserve(request.account, fresh.length, now);
    request.held.reservation = quota;
    for (let n = quota.accepted; n < fresh.length; n++) results[fresh[n] as number] = { status: 'dropped' };
    const admitted = quota.accepted === fresh.length ? fresh : fresh.slice(0, quota.accepted);
    const ids: string[] = [];
    for (let n = 0; n < admitted.length; n++) ids.push(newId('evt', now));
    return Object.assign(request, { quota, admitted, ids });
  };
}
