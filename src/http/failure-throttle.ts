import { firstKey } from '../util/first-key.js';

/**
 * Failed attempts at a secret (the admin token), per source address and over all addresses,
 * in a sliding window: once either count reaches its limit, attempts are refused without
 * being checked until the oldest failure leaves the window. Per process: N instances allow N
 * times as many guesses, which a token of at least 16 characters makes irrelevant; the cap
 * is there to make guessing slow and visible, not possible.
 */
export interface FailureThrottleOptions {
  /** Failures per address in the window. */
  readonly perAddress: number;
  /** Failures from all addresses together in the window. */
  readonly overall: number;
  readonly windowMs: number;
  /** Addresses remembered; the least recently failing one is forgotten first. */
  readonly maxAddresses?: number;
}

export class FailureThrottle {
  /** Per address, the times of its failures still in the window, oldest first (at most perAddress). */
  private readonly byAddress = new Map<string, number[]>();
  private readonly all: number[] = [];
  private readonly maxAddresses: number;

  constructor(private readonly options: FailureThrottleOptions) {
    this.maxAddresses = options.maxAddresses ?? 10_000;
  }

  /** Whole seconds (at least 1) until `address` may try again, or 0 when it may try now. */
  retryAfter(address: string, now: number): number {
    const since = now - this.options.windowMs;
    dropOlder(this.all, since);
    const mine = this.byAddress.get(address);
    if (mine) {
      dropOlder(mine, since);
      if (mine.length === 0) this.byAddress.delete(address);
    }
    let until = 0;
    if (mine && mine.length >= this.options.perAddress) until = (mine[mine.length - this.options.perAddress] as number) + this.options.windowMs;
    if (this.all.length >= this.options.overall) until = Math.max(until, (this.all[this.all.length - this.options.overall] as number) + this.options.windowMs);
    return until > now ? Math.max(1, Math.ceil((until - now) / 1000)) : 0;
  }

  /** Records a failed attempt by `address`. */
  fail(address: string, now: number): void {
    let mine = this.byAddress.get(address);
    if (mine) this.byAddress.delete(address);
    else {
      mine = [];
      const oldest = this.byAddress.size >= this.maxAddresses ? firstKey(this.byAddress) : undefined;
      if (oldest !== undefined) this.byAddress.delete(oldest);
    }
    // Re-inserted: Map order is then least recently failing first.
    this.byAddress.set(address, mine);
    mine.push(now);
    if (mine.length > this.options.perAddress) mine.shift();
    this.all.push(now);
    if (this.all.length > this.options.overall) this.all.shift();
  }
}

function dropOlder(times: number[], since: number): void {
  let n = 0;
  while (n < times.length && (times[n] as number) <= since) n++;
  if (n > 0) times.splice(0, n);
}
