import { performance } from 'node:perf_hooks';
import type { IngestAdmission } from './ingest-admission.js';

export interface SaturationSettings {
  /** How often the event loop's utilisation is read, in ms: one window. */
  readonly windowMs: number;
  /** A window whose utilisation is at least this is saturated; two in a row lower the limit. */
  readonly saturatedAt: number;
  /** Below this utilisation the limit grows back towards the configured one. */
  readonly relaxedBelow: number;
  /** The limit is never lowered below this (nor above the configured limit). */
  readonly minInFlight: number;
}

export const SATURATION: SaturationSettings = { windowMs: 250, saturatedAt: 0.97, relaxedBelow: 0.9, minInFlight: 8 };

/**
 * Lowers the number of ingestion requests admitted at once while the event loop is saturated,
 * and raises it back once the loop has time to spare.
 *
 * When the process's CPU is what runs out, the requests it has not read yet wait in its sockets,
 * where the admission's bounds do not see them: a loop that is never idle reads each socket later
 * than the one before, and that wait grows without bound while every request it does read is
 * admitted. Admitting fewer at once makes the accepted rate the limit (by Little's law, the
 * requests in flight over the time each takes), so the time the loop saves goes to reading the
 * sockets and answering the requests past the limit at once (503 OVERLOADED, far cheaper than
 * ingesting). The signal is the loop's utilisation: a loop that waited for I/O in a window read
 * everything that had arrived, so its sockets hold no backlog; one busy through two windows in a
 * row is behind. The limit halves with each saturated window and grows by an eighth per
 * relaxed one (multiplicative decrease, gradual increase), so it settles where the loop keeps
 * some idle time.
 */
export class SaturationGovernor {
  private saturatedWindows = 0;
  private readonly floor: number;

  constructor(
    private readonly admission: IngestAdmission,
    private readonly settings: SaturationSettings = SATURATION,
  ) {
    this.floor = Math.min(settings.minInFlight, admission.limits.maxInFlight ?? settings.minInFlight);
  }

  /** The loop's utilisation over the last window, 0 to 1. */
  observe(utilisation: number): void {
    const limit = this.admission.inFlightLimitNow;
    const ceiling = this.admission.limits.maxInFlight ?? Number.POSITIVE_INFINITY;
    if (utilisation >= this.settings.saturatedAt) {
      if (++this.saturatedWindows >= 2 && limit > this.floor) this.admission.setInFlightLimit(Math.max(this.floor, Math.floor(limit / 2)));
      return;
    }
    this.saturatedWindows = 0;
    if (utilisation < this.settings.relaxedBelow && limit < ceiling) this.admission.setInFlightLimit(limit + Math.max(1, Math.ceil(limit / 8)));
  }
}

/**
 * Starts governing the admission's in-flight limit from this process's event loop; returns the
 * function that stops it. Without a bound on the requests in flight there is nothing to govern.
 */
export function governBySaturation(admission: IngestAdmission, settings: SaturationSettings = SATURATION): () => void {
  if (admission.limits.maxInFlight === undefined) return () => {};
  const governor = new SaturationGovernor(admission, settings);
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    governor.observe(performance.eventLoopUtilization(now, last).utilization);
    last = now;
  }, settings.windowMs);
  timer.unref();
  return () => clearInterval(timer);
}
