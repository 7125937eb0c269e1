import type { ScoredEvent } from '../event/types.js';
import type { AlertWrite, CommitBatch, IdempotencyRow, NewEventRow } from '../storage/types.js';
import { liveMessages, type LiveFeed } from '../storage/live-feed.js';
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

/**
 * Commits through the group; with a live feed, tells the account's open streams what the
 * transaction stored once it committed (and only then). Building and handing over the message
 * happens only while a stream of the account is open, and never fails the commit.
 */
export function commitIn(commits: CommitGroup, live?: LiveFeed): Commit {
  return (batch) => {
    if (batch.events.length === 0 && batch.usage.length === 0) return Promise.resolve();
    const committed = commits.add(batch);
    return live === undefined ? committed : committed.then(() => publishCommitted(live, batch));
  };
}

function publishCommitted(live: LiveFeed, batch: CommitBatch): void {
  try {
    for (const [accountId, message] of liveMessages(batch.events, batch.alerts, (id) => live.listening(id))) live.publish(accountId, message);
  } catch {
    // The events are stored and answered whatever happens to their live copy.
  }
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
