import { HOUR_MS } from '../util/duration.js';
/** The width of an hour in the actor and address summaries, in milliseconds of received_at. */
export const SUMMARY_HOUR_MS = HOUR_MS;

export const hourOf = (receivedAt: number): number => Math.floor(receivedAt / SUMMARY_HOUR_MS);

/** The two summaries: by actor id and by address. */
export type SummaryKind = 'actor' | 'ip';

/** One hour's summarised values, by kind and account: an account id is shared by most entries, so it is held once per set. */
type HourSummaries = Record<SummaryKind, Map<string, Set<string>>>;

/**
 * The summary rows (account, actor or address, hour) the writer knows are stored, for the two
 * newest hours it has written: most events repeat a pair already summarised this hour, and this
 * spares them any statement. All are forgotten when a write transaction rolls back (its rows
 * were remembered as written) and when the summaries' deletion count (the epoch) moves, since
 * retention may have deleted them. Each value is held as the writer received it, in a set per
 * account: a few hundred thousand actors and addresses an hour cost their own strings and a set
 * entry each, not a joined key apiece.
 */
export class SummaryHours {
  private epoch: number | undefined;
  private newest = -Infinity;
  private readonly hours = new Map<number, HourSummaries>();

  /** Called inside the write transaction, where no deletion can run concurrently. */
  sync(epoch: number): void {
    if (epoch === this.epoch) return;
    this.forget();
    this.epoch = epoch;
  }

  forget(): void {
    this.hours.clear();
    this.newest = -Infinity;
    this.epoch = undefined;
  }

  has(hour: number, kind: SummaryKind, accountId: string, value: string): boolean {
    return this.hours.get(hour)?.[kind].get(accountId)?.has(value) === true;
  }

  add(hour: number, kind: SummaryKind, accountId: string, value: string): void {
    if (hour > this.newest) {
      this.newest = hour;
      for (const h of this.hours.keys()) if (h < hour - 1) this.hours.delete(h);
    }
    if (hour < this.newest - 1) return;
    let summaries = this.hours.get(hour);
    if (summaries === undefined) this.hours.set(hour, (summaries = { actor: new Map(), ip: new Map() }));
    let values = summaries[kind].get(accountId);
    if (values === undefined) summaries[kind].set(accountId, (values = new Set()));
    values.add(value);
  }
}
