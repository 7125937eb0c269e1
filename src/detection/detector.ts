/**
 * The shape every detector has, and the per-event context it works in.
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

export type Thresholds = Readonly<Record<string, number>>;
export type Judge = (answers: Answers) => void;

export interface Detector {
  readonly name: string;
  detect(ctx: DetectContext, t: Thresholds): Judge | void;
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Reads a threshold that the spec documents (every documented name is present after compile). */
export const th = (t: Thresholds, name: string): number => t[name] as number;
