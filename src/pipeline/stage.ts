/**
 * What a stage is, and the runner of an ordered list of them. A stage takes the request as the
 * stage before it left it and either hands it on, richer (a wider type), or ends it: an `Exit`
 * carries the request's answer and what became of its events, by metric label. The runner stops
 * on the first exit; it knows nothing else of the stages.
 */
import type { EventOutcome, IngestOutcome } from './outcome.js';

/** A request ended by a stage before the last one: its answer, and its events' outcome for the metrics. */
export class Exit {
  constructor(
    readonly outcome: IngestOutcome,
    readonly label: EventOutcome,
    readonly events: number,
  ) {}
}

/** A stage's answer: the request handed on, or its end. */
export type Step<T> = T | Exit;

/** Synchronous stages answer at once: the runner awaits only the ones that answer a promise. */
export type Stage<In, Out> = (request: In) => Step<Out> | Promise<Step<Out>>;

type AnyStage = (request: never) => unknown;

/** Stages in the order they run, each taking what the one before it hands on (the types check the order). */
export class StageList<In, Out> {
  private constructor(private readonly stages: readonly AnyStage[]) {}

  static of<In, Out>(first: Stage<In, Out>): StageList<In, Out> {
    return new StageList([first]);
  }

  and<Next>(stage: Stage<Out, Next>): StageList<In, Next> {
    return new StageList([...this.stages, stage]);
  }

  /** The request through every stage, or to the first exit. */
  run(request: In): Promise<Out | Exit> {
    return runStages(this.stages, request) as Promise<Out | Exit>;
  }
}

async function runStages(stages: readonly AnyStage[], request: unknown): Promise<unknown> {
  for (const stage of stages) {
    let step = (stage as (request: unknown) => unknown)(request);
    // The stage keeps what it still needs of the request: while it runs, the runner keeps none of
    // it alive (the store stage waits for its commit holding its rows, not the events).
    request = undefined;
    if (step instanceof Promise) step = await step;
    if (step instanceof Exit) return step;
    request = step;
  }
  return request;
}
