import type { AccountScope } from '../event/tenancy.js';
import type { ResultsOf, StateOp, StateStore, StateStoreUsage } from '../detection/state/state-store.js';
import type { KeyLimits, LimitDecision, QuotaCounter, QuotaDecision, QuotaPlan, RateLimiter, WindowStatus } from '../limits/types.js';
import { systemClock, type Clock } from '../util/clock.js';

export interface FailoverOptions {
  /** While degraded, how long before a call tries the shared backend again. Default 1 s. */
  readonly retryEveryMs?: number;
  /** Called on each switch: true when the backend failed (with the reason), false when it serves again. */
  readonly onChange?: (degraded: boolean, reason?: unknown) => void;
  readonly clock?: Clock;
}

/**
 * The one switch between the shared backend (Redis) and this instance's memory, used by the
 * limiter, the quota counter and the detection state store alike, so that `degraded` means the
 * same for all three. A call goes to the backend unless it is known to be away; a failure (an
 * infrastructure error: the wrapped interfaces answer refusals as values) or a lost connection
 * sends calls to the stand-in, and the backend is tried again every `retryEveryMs` by one call
 * at a time, or at once when the connection reports ready. Recovery runs the registered
 * hand-back steps (the quota's local counts) before the switch reports healthy, so nothing
 * counted locally is lost.
 */
export class Failover {
  private down = false;
  private retryAt = 0;
  private recovering: Promise<void> | undefined;
  /** A call is trying the backend while degraded. */
  private probing = false;
  private readonly handBacks: (() => Promise<void>)[] = [];
  private readonly retryEveryMs: number;
  private readonly clock: Clock;

  constructor(
    readonly name: string,
    private readonly options: FailoverOptions = {},
  ) {
    this.retryEveryMs = options.retryEveryMs ?? 1_000;
    this.clock = options.clock ?? systemClock;
  }

  /** True while calls go to this instance's memory. */
  get degraded(): boolean {
    return this.down;
  }

  /** Registers a step that must succeed before the backend serves again (run in order). */
  onRecovery(handBack: () => Promise<void>): void {
    this.handBacks.push(handBack);
  }

  /** The connection dropped or reported an error. */
  connectionLost(reason?: unknown): void {
    this.markDown(reason);
  }

  /** The connection is ready again: hand back what was counted locally and serve from the backend. */
  connectionReady(): void {
    this.retryAt = 0;
    if (this.down) void this.recover();
  }

  async run<T>(primary: () => Promise<T>, standIn: () => Promise<T>): Promise<T> {
    if (!this.down) return this.tryPrimary(primary, standIn);
    // While degraded one call at a time finds out whether the backend is back: a backend that
    // stops answering fails a call only after the command timeout, which the others need not wait.
    if (this.probing || this.clock.now() < this.retryAt) return standIn();
    this.probing = true;
    try {
      return await this.tryPrimary(primary, standIn);
    } finally {
      this.probing = false;
    }
  }

  private async tryPrimary<T>(primary: () => Promise<T>, standIn: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await primary();
    } catch (err) {
      this.markDown(err);
      return standIn();
    }
    if (this.down) await this.recover();
    return result;
  }

  private markDown(reason: unknown): void {
    this.retryAt = this.clock.now() + this.retryEveryMs;
    if (this.down) return;
    this.down = true;
    this.options.onChange?.(true, reason);
  }

  /** One recovery at a time: concurrent calls wait for the same hand-back. */
  private recover(): Promise<void> {
    this.recovering ??= (async () => {
      try {
        for (const handBack of this.handBacks) await handBack();
        if (this.down) {
          this.down = false;
          this.options.onChange?.(false);
        }
      } catch {
        // The backend did this call's work; stay degraded for later calls until a hand-back succeeds.
        this.retryAt = this.clock.now() + this.retryEveryMs;
      } finally {
        this.recovering = undefined;
      }
    })();
    return this.recovering;
  }
}

/** The rate limiter on the shared backend, on this instance's windows while it is away. */
export class FailoverRateLimiter implements RateLimiter {
  constructor(
    private readonly primary: RateLimiter,
    private readonly standIn: RateLimiter,
    private readonly failover: Failover,
  ) {}

  hitIp(ip: string, perMinute: number, now: number): Promise<LimitDecision> {
    return this.failover.run(
      () => this.primary.hitIp(ip, perMinute, now),
      () => this.standIn.hitIp(ip, perMinute, now),
    );
  }

  consumeKey(keyId: string, limits: KeyLimits, events: number, now: number): Promise<LimitDecision> {
    return this.failover.run(
      () => this.primary.consumeKey(keyId, limits, events, now),
      () => this.standIn.consumeKey(keyId, limits, events, now),
    );
  }

  peekKey(keyId: string, limits: KeyLimits, now: number): Promise<WindowStatus> {
    return this.failover.run(
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
 * The monthly quota on the shared backend, on a stand-in seeded from the store while it is away.
 * What the stand-in counted is handed to the backend (absorb) before the switch reports healthy,
 * and the stand-in forgets its months so that the next outage seeds them afresh from the store:
 * an outage never lets a drop-plan account past its cap.
 */
export class FailoverQuotaCounter implements QuotaCounter {
  private readonly deltas = new Map<string, Delta>();

  constructor(
    private readonly primary: QuotaCounter,
    private readonly standIn: QuotaCounter & { clear(): void },
    private readonly failover: Failover,
  ) {
    failover.onRecovery(() => this.handBack());
  }

  reserve(accountId: string, period: string, events: number, plan: QuotaPlan): Promise<QuotaDecision> {
    return this.failover.run(
      () => this.primary.reserve(accountId, period, events, plan),
      async () => {
        const decision = await this.standIn.reserve(accountId, period, events, plan);
        this.note(accountId, period, decision.accepted, decision.dropped);
        return decision;
      },
    );
  }

  release(accountId: string, period: string, decision: QuotaDecision): Promise<void> {
    return this.failover.run(
      () => this.primary.release(accountId, period, decision),
      async () => {
        await this.standIn.release(accountId, period, decision);
        this.note(accountId, period, -decision.accepted, -decision.dropped);
      },
    );
  }

  current(accountId: string, period: string): Promise<{ readonly used: number; readonly dropped: number }> {
    return this.failover.run(
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

  /** A failure part-way keeps the rest for the next recovery. */
  private async handBack(): Promise<void> {
    for (const [id, delta] of this.deltas) {
      if (delta.used !== 0 || delta.dropped !== 0) await this.primary.absorb?.(delta.accountId, delta.period, delta);
      this.deltas.delete(id);
    }
    this.standIn.clear();
  }
}

/**
 * Detection state on the shared backend, in this instance's memory while it is away. Keys carry
 * the shared backend's scope (the account id) on both sides, so a record written during an
 * outage is never addressed under another account's alias.
 */
export class FailoverStateStore implements StateStore {
  readonly kind = 'redis' as const;

  constructor(
    private readonly primary: StateStore,
    private readonly standIn: StateStore,
    private readonly failover: Failover,
  ) {}

  scope(accountId: string): AccountScope {
    return this.primary.scope(accountId);
  }

  run<const T extends readonly StateOp[]>(ops: T): Promise<ResultsOf<T>> {
    return this.failover.run(
      () => this.primary.run(ops),
      () => this.standIn.run(ops),
    );
  }

  /** The stand-in's: the state this process holds while Redis is unreachable. */
  usage(): StateStoreUsage {
    return this.standIn.usage?.() ?? { bytes: 0, evictions: 0 };
  }

  /** Both sides: records written to the stand-in during an outage are the account's too. */
  async forget(accountId: string, mentions: (text: string) => boolean): Promise<number> {
    const standIn = (await this.standIn.forget?.(accountId, mentions)) ?? 0;
    return standIn + ((await this.primary.forget?.(accountId, mentions)) ?? 0);
  }

  ping(): Promise<void> {
    return this.primary.ping();
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.standIn.close()]);
  }
}
