import type { ScoredEvent } from '../event/types.js';
import type { AlertWrite, CommitBatch, IdempotencyRow, NewEventRow } from '../storage/types.js';
import { toEventResult, toEventRow } from './answer.js';
import type { CommitGroup } from './commit-group.js';
import { answersOf } from './dedupe.js';
import { answered, type Answered } from './outcome.js';
import type { Scored } from './request.js';
import type { Stage } from './stage.js';

/**
 * Hands a request's rows to the commit group and resolves once their transaction committed.
 * Rejects with StoreUnavailableError when it did not commit.
 */
const NO_WRITES: readonly AlertWrite[] = Object.freeze([]);

export type Commit = (batch: CommitBatch) => Promise<void>;

export function commitIn(commits: CommitGroup): Commit {
  return (batch) => (batch.events.length > 0 || batch.usage.length > 0 ? commits.add(batch) : Promise.resolve());
}

/**
 * Each admitted event's answer, its row, its alert rows and its idempotency row, committed with
 * the month's usage in one group transaction: the 202 is sent only after it committed. The
 * answers and rows are made before the commit is awaited, so while it runs the request holds
 * them and nothing else of its events.
 */
export function storeStage(commit: Commit, degraded?: () => boolean): Stage<Scored, Answered> {
  return (request) => {
    const { scored, admitted, detectorWrites, modelWrites, seen, account, now } = request;
    const { results } = seen;
    const rows: NewEventRow[] = [];
    const alerts: AlertWrite[] = [];
    const idempotency: IdempotencyRow[] = [];
    // True while shared state is unreachable and local fallbacks serve limits and detection.
    const local = degraded?.() ?? false;
    for (let n = 0; n < scored.length; n++) {
      const event = scored[n] as ScoredEvent;
      const result = toEventResult(event, local);
      results[admitted[n] as number] = result;
      rows.push(toEventRow(event, account, result));
      for (const write of detectorWrites[n] as readonly AlertWrite[]) alerts.push(write);
      for (const write of modelWrites?.[n] ?? NO_WRITES) alerts.push(write);
      const { eventId } = event;
      if (eventId !== undefined)
        idempotency.push({ accountId: account.account.id, eventId, response: result, createdAt: now, payloadDigest: event.payloadDigest ?? null });
    }
    const answer = answered(answersOf(seen, request.events), request, false);
    return commit({ events: rows, alerts, usage: request.quota.usage, idempotency }).then(() => answer);
  };
}
