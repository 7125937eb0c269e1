/** The width of an hour in the actor and address summaries, in milliseconds of received_at. */
export const SUMMARY_HOUR_MS = 3_600_000;

export const hourOf = (receivedAt: number): number => Math.floor(receivedAt / SUMMARY_HOUR_MS);

/**
 * The summary rows (account, actor or address, hour) the writer knows are stored, for the two
 * newest hours it has written: most events repeat a pair already summarised this hour, and this
 * spares them any statement. All are forgotten when a write transaction rolls back (its rows
 * were remembered as written) and when the summaries' deletion count (the epoch) moves, since
 * retention may have deleted them.
 */
export class SummaryHours {
  private epoch: number | undefined;
  private newest = -Infinity;
  private readonly hours = new Map<number, Set<string>>();

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

  has(hour: number, key: string): boolean {
    return this.hours.get(hour)?.has(key) === true;
  }

  add(hour: number, key: string): void {
    if (hour > this.newest) {
      this.newest = hour;
      for (const h of this.hours.keys()) if (h < hour - 1) this.hours.delete(h);
    }
    if (hour < this.newest - 1) return;
    let keys = this.hours.get(hour);
    if (keys === undefined) this.hours.set(hour, (keys = new Set()));
    keys.add(key);
  }
}
