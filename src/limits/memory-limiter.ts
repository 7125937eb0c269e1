import { allowed, rejected, windowStatus } from './decisions.js';
import type { KeyLimits, LimitDecision, RateLimiter, WindowStatus } from './types.js';
import { WindowSlab } from './window-slab.js';
import { MINUTE_WINDOW, SECOND_WINDOW, secondsUntil, type WindowShape } from './windows.js';

export interface MemoryRateLimiterOptions {
  /** How often (in the `now` passed to the calls) keys with empty windows are forgotten. Default 10 s. */
  readonly sweepEveryMs?: number;
  /** Slots allocated up front per table (keys, addresses); tables double as needed. Default 256. */
  readonly initialCapacity?: number;
}

const MINUTE = 0;
const SECOND = 1;

/**
 * The embedded limiter: per key a per-minute window of events and a per-second window
 * of requests, per source address a per-minute window of requests (shapes and
 * guarantees in windows.ts). Fixed memory per key; idle keys are swept.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly keys: WindowSlab;
  private readonly ips: WindowSlab;
  private readonly sweepEveryMs: number;
  private nextSweepAt = -Infinity;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.keys = new WindowSlab([MINUTE_WINDOW, SECOND_WINDOW], options.initialCapacity);
    this.ips = new WindowSlab([MINUTE_WINDOW], options.initialCapacity);
    this.sweepEveryMs = options.sweepEveryMs ?? 10_000;
  }

  async hitIp(ip: string, perMinute: number, now: number): Promise<LimitDecision> {
    this.maybeSweep(now);
    const slot = this.ips.slotFor(ip);
    this.ips.advance(slot, now);
    const used = this.ips.sum(slot, MINUTE);
    if (used + 1 > perMinute) {
      const status = this.status(this.ips, slot, perMinute, used, now);
      return rejected(status, retryAfter(this.ips, slot, MINUTE, MINUTE_WINDOW, used + 1 - perMinute, now), 'ip_minute');
    }
    this.ips.add(slot, MINUTE, 1);
    return allowed(this.status(this.ips, slot, perMinute, used + 1, now));
  }

  async consumeKey(keyId: string, limits: KeyLimits, events: number, now: number): Promise<LimitDecision> {
    this.maybeSweep(now);
    const slot = this.keys.slotFor(keyId);
    this.keys.advance(slot, now);
    const minuteUsed = this.keys.sum(slot, MINUTE);
    const secondUsed = this.keys.sum(slot, SECOND);
    const minuteExcess = minuteUsed + events - limits.rpm;
    const secondExcess = secondUsed + 1 - limits.eps;
    if (minuteExcess > 0 || secondExcess > 0) {
      const status = this.keyStatus(slot, limits, minuteUsed, secondUsed, now);
      const minuteRetry = minuteExcess > 0 ? retryAfter(this.keys, slot, MINUTE, MINUTE_WINDOW, minuteExcess, now) : 0;
      const secondRetry = secondExcess > 0 ? retryAfter(this.keys, slot, SECOND, SECOND_WINDOW, secondExcess, now) : 0;
      return minuteRetry >= secondRetry ? rejected(status, minuteRetry, 'key_minute') : rejected(status, secondRetry, 'key_second');
    }
    this.keys.add(slot, MINUTE, events);
    this.keys.add(slot, SECOND, 1);
    return allowed(this.keyStatus(slot, limits, minuteUsed + events, secondUsed + 1, now));
  }

  async peekKey(keyId: string, limits: KeyLimits, now: number): Promise<WindowStatus> {
    const slot = this.keys.find(keyId);
    if (slot < 0) return windowStatus(limits.rpm, 0, -1, now, windowStatus(limits.eps, 0, -1, now));
    this.keys.advance(slot, now);
    return this.keyStatus(slot, limits, this.keys.sum(slot, MINUTE), this.keys.sum(slot, SECOND), now);
  }

  async close(): Promise<void> {
    this.keys.clear();
    this.ips.clear();
  }

  /** Keys and addresses held, and the typed-array bytes of one key's slot. */
  stats(): { readonly keys: number; readonly ips: number; readonly keySlotBytes: number; readonly ipSlotBytes: number } {
    return { keys: this.keys.size, ips: this.ips.size, keySlotBytes: this.keys.slotBytes, ipSlotBytes: this.ips.slotBytes };
  }

  private status(slab: WindowSlab, slot: number, limit: number, used: number, now: number): WindowStatus {
    return windowStatus(limit, used, used > 0 ? slab.freedAt(slot, MINUTE, 1) : -1, now);
  }

  private keyStatus(slot: number, limits: KeyLimits, minuteUsed: number, secondUsed: number, now: number): WindowStatus {
    const second = windowStatus(limits.eps, secondUsed, secondUsed > 0 ? this.keys.freedAt(slot, SECOND, 1) : -1, now);
    return windowStatus(limits.rpm, minuteUsed, minuteUsed > 0 ? this.keys.freedAt(slot, MINUTE, 1) : -1, now, second);
  }

  private maybeSweep(now: number): void {
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + this.sweepEveryMs;
    this.keys.sweep(now);
    this.ips.sweep(now);
  }
}

/**
 * Whole seconds until `excess` units have left window `w`. A request larger than the
 * limit never fits; it is told the window's span.
 */
function retryAfter(slab: WindowSlab, slot: number, w: number, shape: WindowShape, excess: number, now: number): number {
  const at = slab.freedAt(slot, w, excess);
  return at === Infinity ? Math.ceil(shape.spanMs / 1_000) : secondsUntil(at, now);
}
