import { systemClock, type Clock } from '../util/clock.js';
import type { KeyLimits, LimitDecision, QuotaCounter, QuotaDecision, QuotaPlan, RateLimiter, WindowStatus } from './types.js';

export interface FallbackOptions {
  /** While degraded, how long before the primary is tried again. Default 1 s. */
  readonly retryEveryMs?: number;
  /** Called on each switch: true when the primary failed (with its error), false when it answers again. */
  readonly onChange?: (degraded: boolean, error?: unknown) => void;
  readonly clock?: Clock;
}

/**
 * Runs calls on a primary backend (Redis) and, when it throws (an infrastructure
 * failure: limits and quotas answer refusals as values), on a per-instance stand-in,
 * trying the primary again every `retryEveryMs` until it answers.
 */
class Switch {
  degraded = false;
  private retryAt = 0;
  private readonly retryEveryMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly options: FallbackOptions,
    private readonly onRecover: () => Promise<void> = async () => {},
  ) {
    this.retryEveryMs = options.retryEveryMs ?? 1_000;
    this.clock = options.clock ?? systemClock;
  }

  async run<T>(primary: () => Promise<T>, standIn: () => Promise<T>): Promise<T> {
    const now = this.clock.now();
    if (this.degraded && now < this.retryAt) return standIn();
    let result: T;
    try {
      result = await primary();
    } catch (err) {
      this.retryAt = now + this.retryEveryMs;
      if (!this.degraded) {
        this.degraded = true;
        this.options.onChange?.(true, err);
      }
      return standIn();
    }
    if (this.degraded) {
      // The primary did this call's work; stay degraded (for later calls) until the hand-back succeeds.
      try {
        await this.onRecover();
        this.degraded = false;
        this.options.onChange?.(false);
      } catch {
        this.retryAt = now + this.retryEveryMs;
      }
    }
    return result;
  }
}

/** A limiter on the primary, on the stand-in (per instance) while the primary is unreachable. */
export class FallbackRateLimiter implements RateLimiter {
  private readonly switch: Switch;

  constructor(
    private readonly primary: RateLimiter,
    private readonly standIn: RateLimiter,
    options: FallbackOptions = {},
  ) {
    this.switch = new Switch(options);
  }

  /** True while calls go to the stand-in. */
  get degraded(): boolean {
    return this.switch.degraded;
  }

  hitIp(ip: string, perMinute: number, now: number): Promise<LimitDecision> {
    return this.switch.run(
      () => this.primary.hitIp(ip, perMinute, now),
      () => this.standIn.hitIp(ip, perMinute, now),
    );
  }

  consumeKey(keyId: string, limits: KeyLimits, events: number, now: number): Promise<LimitDecision> {
    return this.switch.run(
      () => this.primary.consumeKey(keyId, limits, events, now),
      () => this.standIn.consumeKey(keyId, limits, events, now),
    );
  }

  peekKey(keyId: string, limits: KeyLimits, now: number): Promise<WindowStatus> {
    return this.switch.run(
      () => this.primary.peekKey(keyId, limits, now),
      () => this.standIn.peekKey(keyId, limits, now),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.standIn.close()]);
  }
}

interface Delta {
  readonly accountId: string;
  readonly period: string;
  used: number;
  dropped: number;
}

/**
 * A quota on the primary, on a stand-in seeded from the store while the primary is
 * unreachable. What the stand-in counted is handed to the primary (absorb) when it
 * answers again, and the stand-in forgets its months so that the next outage seeds
 * them afresh from the store.
 */
export class FallbackQuotaCounter implements QuotaCounter {
  private readonly switch: Switch;
  private readonly deltas = new Map<string, Delta>();

  constructor(
    private readonly primary: QuotaCounter,
    private readonly standIn: QuotaCounter & { clear(): void },
    options: FallbackOptions = {},
  ) {
    this.switch = new Switch(options, () => this.handBack());
  }

  get degraded(): boolean {
    return this.switch.degraded;
  }

  reserve(accountId: string, period: string, events: number, plan: QuotaPlan): Promise<QuotaDecision> {
    return this.switch.run(
      () => this.primary.reserve(accountId, period, events, plan),
      async () => {
        const decision = await this.standIn.reserve(accountId, period, events, plan);
        this.note(accountId, period, decision.accepted, decision.dropped);
        return decision;
      },
    );
  }

  release(accountId: string, period: string, decision: QuotaDecision): Promise<void> {
    return this.switch.run(
      () => this.primary.release(accountId, period, decision),
      async () => {
        await this.standIn.release(accountId, period, decision);
        this.note(accountId, period, -decision.accepted, -decision.dropped);
      },
    );
  }

  current(accountId: string, period: string): Promise<{ readonly used: number; readonly dropped: number }> {
    return this.switch.run(
      () => this.primary.current(accountId, period),
      () => this.standIn.current(accountId, period),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.standIn.close()]);
  }

  private note(accountId: string, period: string, used: number, dropped: number): void {
    const id = `${accountId}\u0000${period}`;
    const delta = this.deltas.get(id) ?? { accountId, period, used: 0, dropped: 0 };
    delta.used += used;
    delta.dropped += dropped;
    this.deltas.set(id, delta);
  }

  /** Runs when the primary answers again; a failure here keeps the rest for the next recovery. */
  private async handBack(): Promise<void> {
    for (const [id, delta] of this.deltas) {
      if (delta.used !== 0 || delta.dropped !== 0) await this.primary.absorb?.(delta.accountId, delta.period, delta);
      this.deltas.delete(id);
    }
    this.standIn.clear();
  }
}
