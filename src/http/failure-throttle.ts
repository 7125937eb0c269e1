import { firstKey } from '../util/first-key.js';
import { formatAddress, parseAddress } from '../util/ip.js';

/**
 * Failed attempts at a secret (the admin token), per source, in a sliding window. The caller
 * checks the secret first and reports only failures, so the throttle never stands between the
 * right secret and its answer: it decides how a wrong one is answered (401 and a log line while
 * the source is under its limit, 429 past it). What makes guessing hopeless is the secret's
 * length, not this throttle; the throttle keeps failures visible and bounds what a guessing
 * source costs in log lines. Per process.
 */
export interface FailureThrottleOptions {
  /** Failures per source in the window. */
  readonly perSource: number;
  readonly windowMs: number;
  /** Sources remembered; the least recently failing one is forgotten first. */
  readonly maxSources: number;
}

/**
 * The source an address counts as: an IPv4 address itself (IPv4-mapped IPv6 included), an IPv6
 * address its /64, the smallest network a subscriber is given, so a client cannot make its
 * failures count as many sources by changing the low 64 bits of its address.
 */
export function failureSource(ip: string): string {
  const address = parseAddress(ip);
  if (address === undefined) return ip;
  if (address.version === 4) return formatAddress(address);
  return `${formatAddress({ ...address, w2: 0, w3: 0 })}/64`;
}

export class FailureThrottle {
  /** Per source, the times of its counted failures, oldest first: at most perSource, so the oldest decides when it may fail again. */
  private readonly bySource = new Map<string, number[]>();

  constructor(private readonly options: FailureThrottleOptions) {}

  /** Sources remembered (at most maxSources). */
  get size(): number {
    return this.bySource.size;
  }

  /**
   * A failed attempt from `ip`: 0 when it is counted against its source, else the whole seconds
   * (at least 1) until the source's oldest failure leaves the window; an attempt past the limit
   * is not counted, so a source that keeps failing is refused for at most one window at a time.
   */
  fail(ip: string, now: number): number {
    const source = failureSource(ip);
    const { perSource, windowMs, maxSources } = this.options;
    let times = this.bySource.get(source);
    if (times !== undefined) {
      dropOlder(times, now - windowMs);
      if (times.length >= perSource) return Math.max(1, Math.ceil(((times[0] as number) + windowMs - now) / 1000));
      this.bySource.delete(source);
    } else {
      times = [];
      const oldest = this.bySource.size >= maxSources ? firstKey(this.bySource) : undefined;
      if (oldest !== undefined) this.bySource.delete(oldest);
    }
    // Re-inserted: Map order is then least recently failing first.
    this.bySource.set(source, times);
    times.push(now);
    return 0;
  }
}

function dropOlder(times: number[], since: number): void {
  let n = 0;
  while (n < times.length && (times[n] as number) <= since) n++;
  if (n > 0) times.splice(0, n);
}
