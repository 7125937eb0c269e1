/**
 * Detection for the events of one request against a remote StateStore (Redis), with the
 * results of running them one after the other but without one round trip per event in turn.
 *
 * Every event's first batch is sent back to back, in event order, before any answer is awaited
 * (a pipeline: Redis runs them in the order sent). An event is then judged only after every
 * earlier event has sent all its batches, so its alert updates follow theirs. What makes this
 * equal to the sequential order is what later batches may write: alerts (alert.open), markers
 * (last.swap, DetectContext.after) and chain stages (sequence.mark). A first-batch op touching
 * such state either
 *   - only reads it (alert.peek, last.swap without a value, seen.add readOnly): if an earlier
 *     event wrote that record field after the op was sent, the read is sent again before the
 *     event is judged; or
 *   - writes it (sequence.mark, last.swap with a value): then its first batch waits until every
 *     earlier event has sent its last batch (and the events after it wait with it).
 * Every other op (windows, distinct sets, seen sets, counters) is never written by a later batch.
 */
import type { AccountContext } from '../event/account.js';
import type { EnrichedEvent } from '../event/types.js';
import type { Clock } from '../util/clock.js';
import { Answers, type OpBatch } from './detector.js';
import { EventDetection, NO_DETECTION, type DetectionResult } from './engine.js';
import type { StateOp, StateResult, StateStore } from './state/state-store.js';

export interface BatchItem {
  readonly event: EnrichedEvent;
  readonly eventId?: string;
}

const LATER_WRITTEN_KINDS: ReadonlySet<StateOp['kind']> = new Set(['alert.open', 'last.swap', 'sequence.mark']);

function isPureRead(op: StateOp): boolean {
  return op.kind === 'alert.peek' || (op.kind === 'last.swap' && op.value === undefined) || (op.kind === 'seen.add' && op.readOnly === true);
}

/** A first batch that writes state a later batch of an earlier event may write too: it must wait for them. */
function mustWaitForEarlier(batch: OpBatch): boolean {
  return batch.ops.some((op) => LATER_WRITTEN_KINDS.has(op.kind) && !isPureRead(op));
}

const fieldOf = (op: StateOp) => `${op.key}\u0000${op.field}`;
const settled = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    () => undefined,
  );

export async function detectPipelined(state: StateStore, clock: Clock, items: readonly BatchItem[], ctx: AccountContext): Promise<DetectionResult[]> {
  let sent = 0;
  /** record field -> number of the latest later-step batch that wrote it */
  const laterWrites = new Map<string, number>();
  const send = (ops: readonly StateOp[]): Promise<StateResult[]> => {
    sent++;
    return state.run(ops) as Promise<StateResult[]>;
  };

  /** Sends the first batch's reads again when an earlier event wrote their field after it was sent. */
  async function refreshStaleReads(first: OpBatch, results: StateResult[], sentAs: number): Promise<Answers> {
    const stale: number[] = [];
    first.ops.forEach((op, i) => {
      if (isPureRead(op) && (laterWrites.get(fieldOf(op)) ?? 0) > sentAs) stale.push(i);
    });
    if (stale.length === 0) return new Answers(results);
    const again = await send(stale.map((i) => first.ops[i] as StateOp));
    const merged = [...results];
    stale.forEach((i, n) => (merged[i] = again[n] as StateResult));
    return new Answers(merged);
  }

  async function follow(
    detection: EventDetection,
    first: OpBatch,
    answered: Promise<StateResult[]>,
    sentAs: number,
    earlierWritesSent: Promise<void>,
    writesSent: () => void,
  ): Promise<DetectionResult> {
    try {
      const results = await answered;
      await earlierWritesSent;
      let batch = detection.next(await refreshStaleReads(first, results, sentAs));
      while (batch !== undefined) {
        for (const op of batch.ops) laterWrites.set(fieldOf(op), sent + 1);
        const answers = send(batch.ops);
        if (detection.lastBatchSent) writesSent();
        batch = detection.next(new Answers(await answers));
      }
      return detection.result();
    } finally {
      writesSent();
    }
  }

  const results: Promise<DetectionResult>[] = [];
  let earlierWritesSent: Promise<void> = Promise.resolve();
  try {
    for (const item of items) {
      const detection = EventDetection.start(state, clock, item.event, ctx, item.eventId);
      if (detection === undefined) {
        results.push(Promise.resolve(NO_DETECTION));
        continue;
      }
      const first = detection.next() as OpBatch;
      if (mustWaitForEarlier(first)) await earlierWritesSent;
      const sentAs = first.length > 0 ? sent + 1 : sent;
      const answered = first.length > 0 ? send(first.ops) : Promise.resolve([]);
      let writesSent!: () => void;
      const ownWritesSent = new Promise<void>((resolve) => (writesSent = resolve));
      const result = follow(detection, first, answered, sentAs, earlierWritesSent, writesSent);
      results.push(result);
      earlierWritesSent = ownWritesSent;
    }
  } finally {
    // Every started event is awaited, so none fails unobserved.
    await Promise.all(results.map(settled));
  }
  return Promise.all(results);
}
