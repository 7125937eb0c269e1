/**
 * The shape every detector module has, and the per-event context it works in. A module is one
 * `defineDetector({...})`: its declaration (families, thresholds, alert types with severity,
 * MITRE ids, window and decision) next to its logic; detectors/index.ts lists the modules.
 *
 * A detector runs in two steps so one event's state operations travel as one batch:
 *   detect(ctx, thresholds)  queues state ops on `ctx.ops` and returns a judge (or nothing);
 *   judge(answers)           reads the answers and raises alerts through `ctx.raise`.
 * Writes that depend on an answer (a marker for a later event) go on `ctx.after`, which is sent
 * with the alert updates in the second batch.
 */
import type { LastSwapOp, StateOp, ResultOf, StateResult } from './state/state-store.js';
import type { EventFacts } from './facts.js';
import type { CompiledSettings } from './settings.js';
import type { AlertDecision, DetectorFamily, Severity } from '../event/classification.js';

/** Index of an op in a batch, typed by the op's answer. */
export type Slot<R> = number & { readonly __answer?: R };

/** An ordered list of state ops; `add` answers where the op's result will be. */
export class OpBatch<Op extends StateOp = StateOp> {
  readonly ops: Op[] = [];
  add<O extends Op>(op: O): Slot<ResultOf<O>> {
    return (this.ops.push(op) - 1) as Slot<ResultOf<O>>;
  }
  get length(): number {
    return this.ops.length;
  }
}

/** The answers to a batch, read through the slots `OpBatch.add` gave out. */
export class Answers {
  constructor(private readonly results: readonly StateResult[]) {}
  get<R>(slot: Slot<R>): R {
    return this.results[slot] as R;
  }
}

/** An alert a detector raised on this event, before deduplication. */
export interface Raised {
  readonly type: string;
  readonly detector: string;
  readonly subject: string;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface DetectContext {
  readonly facts: EventFacts;
  readonly settings: CompiledSettings;
  readonly ops: OpBatch;
  /**
   * Markers for later events (last.swap only): a batch of events is pipelined on the premise
   * that later steps write only alerts, markers and chain stages (see pipelined-batch.ts).
   */
  readonly after: OpBatch<LastSwapOp>;
  /** Account-scoped state key: `<account scope>|<purpose>|<subject>` (StateStore.scope). */
  key(purpose: string, subject: string): string;
  /** The record holding the open alerts of a subject (one field per alert type). */
  alertKey(subject: string): string;
  raise(type: string, subject: string, details?: Readonly<Record<string, unknown>>): void;
}

export type Judge = (answers: Answers) => void;

/** A per-account tunable number: its default and the range an account may set it to. */
export interface ThresholdDecl {
  readonly default: number;
  readonly min: number;
  readonly max: number;
  readonly description: string;
}

/** An alert type as its detector declares it. */
export interface AlertDecl {
  readonly severity: Severity;
  /** MITRE ATT&CK technique ids, e.g. T1110.001. */
  readonly mitre: readonly string[];
  /** Deduplication window: a new sighting within this time of the last one updates the open alert. */
  readonly windowMs: number;
  readonly description: string;
  /**
   * The decision the alert imposes when it is not the one its severity implies (high: challenge,
   * critical: block); null for none whatever the severity.
   */
  readonly decision?: AlertDecision | null;
}

/** Threshold values as a detector reads them: every declared name, and no other. */
export type ThresholdValues<T extends string> = Readonly<Record<T, number>>;

/** What every detector module declares next to its logic; the catalogue, settings and docs are derived from it. */
export interface Declaration<T extends string = string, A extends string = string> {
  readonly name: string;
  /** The catalogue dispatches an event only to detectors whose families it has. */
  readonly families: readonly DetectorFamily[];
  readonly description: string;
  /** Runs on every event, `custom.*` included. */
  readonly generic?: boolean;
  /**
   * False when the composite score counts the detector's signal on a line of its own (threat
   * intel, request scanning): its alerts add no points and put no standing on the actor.
   */
  readonly scored?: boolean;
  /** Settings under `settings.detectors.<name>`, in the order they are documented. */
  readonly thresholds?: { readonly [K in T]: ThresholdDecl };
  /** The alert types it raises, in the order they are documented. */
  readonly alerts: { readonly [K in A]: AlertDecl };
}

/** A detector of single events: its declaration and its two-step logic. */
export interface Detector<T extends string = string, A extends string = string> extends Declaration<T, A> {
  detect(ctx: DetectContext, t: ThresholdValues<T>): Judge | void;
  /** Its thresholds under an account's settings, for a detector that follows another one's window. */
  thresholdsIn(settings: CompiledSettings): ThresholdValues<T>;
}

/**
 * Declares a detector. The threshold names `detect` may read are the keys of `thresholds`, so
 * reading an undeclared one does not compile.
 */
export function defineDetector<const T extends string = never, const A extends string = never>(
  d: Declaration<T, A> & { detect(ctx: DetectContext, t: ThresholdValues<T>): Judge | void },
): Detector<T, A> {
  return Object.assign({}, d, { thresholdsIn: (settings: CompiledSettings) => settings.thresholds(d.name) as ThresholdValues<T> });
}
