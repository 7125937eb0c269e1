/**
 * Watches what each account's threat models cost the request thread and suspends the heaviest
 * model of an account that stays over budget (SUSPENSION_POLICY, budget.ts).
 *
 * Per account, a window of evidence: events evaluated, the models' wall time, the events that ran
 * out of their work budget (each counted as `exhaustedEventMicros`), and the requests whose own
 * events were over budget on average. Each model's share is kept on the compiled model itself (its
 * `usage`). Once the window holds enough events, enough requests over budget, and the average of
 * all its events is over `eventMicros`, the model with the largest share is suspended: at once on
 * this instance, then in the store, and every instance reloads. The window then starts over, so a
 * second model is suspended only if the account is still over budget without the first.
 *
 * Each instance judges the events it evaluates; the store suspends a version once, whichever
 * instance asks first.
 */
import type { ThreatModelStore } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import { SUSPENSION_POLICY, type SuspensionPolicy } from './budget.js';
import type { CompiledModel } from './compile.js';
import type { EvaluationCosts } from './evaluate.js';
import type { ThreatModelRegistry } from './registry.js';

/** One account's evidence since its window started. */
export class CostWindow implements EvaluationCosts {
  events = 0;
  exhausted = 0;
  micros = 0;
  /** Requests whose own events were over budget on average. */
  overRequests = 0;
  /** The counters when the request being evaluated began. */
  private eventsBefore = 0;
  private costBefore = 0;
  constructor(public startedAt: number) {}

  /** Model time of the window, an event out of budget counted as `exhaustedEventMicros`. */
  cost(policy: SuspensionPolicy): number {
    return this.micros + this.exhausted * policy.exhaustedEventMicros;
  }

  begin(policy: SuspensionPolicy): void {
    this.eventsBefore = this.events;
    this.costBefore = this.cost(policy);
  }

  /** Counts the request that began last when its own events were over budget. */
  end(policy: SuspensionPolicy): void {
    const events = this.events - this.eventsBefore;
    if (events > 0 && (this.cost(policy) - this.costBefore) / events > policy.eventMicros) this.overRequests++;
  }

  restart(at: number, models: readonly CompiledModel[]): void {
    this.startedAt = at;
    this.events = 0;
    this.exhausted = 0;
    this.micros = 0;
    this.overRequests = 0;
    this.eventsBefore = 0;
    this.costBefore = 0;
    for (const model of models) {
      model.usage.micros = 0;
      model.usage.exhausted = 0;
    }
  }
}

/** A suspension that was stored (this instance's request was the one that took effect). */
export interface Suspension {
  readonly accountId: string;
  readonly modelId: string;
  readonly version: number;
  readonly at: number;
  readonly reason: string;
}

export interface CostWatchLog {
  warn(details: object, message: string): void;
}

export interface CostWatchOptions {
  readonly store: Pick<ThreatModelStore, 'suspendThreatModel'>;
  readonly registry: Pick<ThreatModelRegistry, 'suspend' | 'resume' | 'changed'>;
  /** Wall time of the suspension as stored and shown. */
  readonly clock: Clock;
  /** Monotonic milliseconds for the windows (default performance.now). */
  readonly now?: () => number;
  /** In place of parts of SUSPENSION_POLICY (tests). */
  readonly policy?: Partial<SuspensionPolicy>;
  readonly log?: CostWatchLog;
}

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export class ModelCostWatch {
  readonly policy: SuspensionPolicy;
  private readonly windows = new Map<string, CostWindow>();
  private readonly listeners: ((suspension: Suspension) => void | Promise<void>)[] = [];
  private readonly writing = new Set<Promise<void>>();
  /** Model versions (account, id, version) suspended for a failure by this instance. */
  private readonly failed = new Set<string>();
  private readonly now: () => number;

  constructor(private readonly options: CostWatchOptions) {
    this.policy = Object.freeze(Object.assign({}, SUSPENSION_POLICY, options.policy));
    this.now = options.now ?? (() => performance.now());
  }

  /** Called with each suspension this instance stored; `settled` waits for a listener's promise. */
  onSuspended(listener: (suspension: Suspension) => void | Promise<void>): void {
    this.listeners.push(listener);
  }

  /** The account's window, for one request's evaluation to add to; an old one starts over first. */
  costsOf(accountId: string, models: readonly CompiledModel[]): CostWindow {
    const now = this.now();
    let window = this.windows.get(accountId);
    if (window === undefined) {
      window = new CostWindow(now);
      this.windows.set(accountId, window);
      for (const model of models) {
        model.usage.micros = 0;
        model.usage.exhausted = 0;
      }
    } else if (now - window.startedAt > this.policy.windowMs) window.restart(now, models);
    window.begin(this.policy);
    return window;
  }

  /**
   * After a request's evaluation (`costsOf` was called for it, and nothing else for the account
   * since): suspends the account's heaviest model when the window is over budget.
   */
  review(accountId: string, window: CostWindow, models: readonly CompiledModel[]): void {
    const policy = this.policy;
    window.end(policy);
    if (window.events < policy.minEvents || window.overRequests < policy.minRequests) return;
    const average = window.cost(policy) / window.events;
    if (average <= policy.eventMicros) return;
    let heaviest: CompiledModel | undefined;
    let weight = -1;
    for (const model of models) {
      const w = model.usage.micros + model.usage.exhausted * policy.exhaustedEventMicros;
      if (w > weight) {
        heaviest = model;
        weight = w;
      }
    }
    if (heaviest === undefined) return;
    const at = this.options.clock.now();
    const reason = reasonFor(at, policy, window, average, weight / window.events, heaviest.usage.exhausted);
    window.restart(this.now(), models);
    this.options.registry.suspend(accountId, heaviest.id, heaviest.version);
    this.track(this.persist(accountId, heaviest, at, reason, 'threat model suspended: its evaluation is over budget').then(() => undefined));
  }

  private track(write: Promise<void>): void {
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write));
  }

  /**
   * After a request's evaluation: suspends each of the account's models whose evaluation threw
   * (`usage.failure`), with what it threw as the reason, once per model version.
   */
  reviewFailures(accountId: string, models: readonly CompiledModel[]): void {
    for (const model of models) {
      const failure = model.usage.failure;
      if (failure === undefined) continue;
      const version = `${accountId}\u0000${model.id}\u0000${model.version}`;
      if (this.failed.has(version)) continue;
      this.failed.add(version);
      const at = this.options.clock.now();
      const when = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const reason = `Suspended at ${when}: evaluating this model failed: ${failure}. The other models and the event were not affected. Save a new version or re-enable it (PATCH {"enabled": true}).`;
      this.options.registry.suspend(accountId, model.id, model.version);
      const stored = this.persist(accountId, model, at, reason, 'threat model suspended: its evaluation failed');
      this.track(
        stored.then((ok) => {
          if (!ok) this.failed.delete(version);
        }),
      );
    }
  }

  /** Resolves once every suspension decided so far is stored (or has failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.writing]);
  }

  /** Stores a suspension decided here; false when the store could not take it. */
  private async persist(accountId: string, model: CompiledModel, at: number, reason: string, logMessage: string): Promise<boolean> {
    const { store, registry, log } = this.options;
    try {
      const stored = await store.suspendThreatModel(accountId, model.id, model.version, at, reason);
      if (stored) {
        log?.warn({ account: accountId, model: model.id, version: model.version, reason }, logMessage);
        const suspension: Suspension = { accountId, modelId: model.id, version: model.version, at, reason };
        for (const listener of this.listeners) await listener(suspension);
      }
      await registry.changed(accountId);
      return true;
    } catch (err) {
      // Not stored: the model is back in force here and is suspended again on the next review.
      registry.resume(accountId, model.id, model.version);
      log?.warn({ err, account: accountId, model: model.id, version: model.version }, `${logMessage}, but the suspension could not be stored`);
      return false;
    }
  }
}

/** What the customer reads on the model: what was measured, against what, and what to do. */
function reasonFor(at: number, policy: SuspensionPolicy, window: CostWindow, average: number, share: number, exhausted: number): string {
  const when = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const ranOut =
    window.exhausted === 0
      ? ''
      : ` ${whole.format(window.exhausted)} of these events ran out of the per-event work budget (${whole.format(exhausted)} of them in this model) and count as ${whole.format(policy.exhaustedEventMicros)} µs each.`;
  return (
    `Suspended at ${when}: the account's threat models took ${whole.format(average)} µs per event on average over ${whole.format(window.events)} events, ` +
    `over the budget of ${whole.format(policy.eventMicros)} µs, and this model took the largest share (${whole.format(share)} µs per event).${ranOut} ` +
    'Simplify its regular expressions, test shorter fields or narrow its event types, then save a new version or re-enable it (PATCH {"enabled": true}).'
  );
}
