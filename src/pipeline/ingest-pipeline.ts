/**
 * The ingestion of one request: the stages compose.ts lists, run in that order, each handing the
 * request on or ending it (src/pipeline/stage.ts). Here is what every request's end has in common,
 * whatever stage it ends in:
 *   - its events are counted by outcome (each outcome a metric label);
 *   - what it holds (its event_id claims, its quota reservation) is kept once its commit
 *     succeeded, and given back when any stage failed;
 *   - a store that is unavailable answers 503 UNAVAILABLE; any other failure is thrown.
 */
import type { AccountContext } from '../event/account.js';
import type { Rejection } from '../event/rejection.js';
import { StoreUnavailableError } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import type { Answered, EventOutcome, IngestOutcome } from './outcome.js';
import { Holdings, type Received } from './request.js';
import { Exit, type StageList } from './stage.js';
import type { IngestInput } from './validate.js';

export type { IngestInput } from './validate.js';
export type { EventOutcome, IngestOutcome } from './outcome.js';

export interface IngestHooks {
  readonly clock: Clock;
  readonly onEvents?: (outcome: EventOutcome, count: number) => void;
}

export interface IngestRequestContext {
  readonly account: AccountContext;
  readonly connectingIp: string;
  /** The request's User-Agent header: a publishable key's events without `user_agent` take it. */
  readonly userAgent?: string;
}

export interface IngestPipeline {
  ingest(input: IngestInput, req: IngestRequestContext): Promise<IngestOutcome>;
}

const UNAVAILABLE: Rejection = {
  code: 'UNAVAILABLE',
  message: 'Storage is unavailable; the event was not accepted. Retry with the same event_id.',
  retryAfter: 1,
};

export function createIngestPipeline(stages: StageList<Received, Answered>, hooks: IngestHooks): IngestPipeline {
  const count = (outcome: EventOutcome, n: number) => {
    if (n > 0) hooks.onEvents?.(outcome, n);
  };

  function ended(held: Holdings): (end: Answered | Exit) => IngestOutcome {
    return (end) => {
      if (end instanceof Exit) {
        count(end.label, end.events);
        return end.outcome;
      }
      held.keep();
      held.countSeen(count);
      count('accepted', held.reservation?.accepted ?? 0);
      count('dropped_quota', held.reservation?.dropped ?? 0);
      return end;
    };
  }

  function failed(held: Holdings): (err: unknown) => Promise<IngestOutcome> {
    return async (err) => {
      await held.giveBack();
      held.countSeen(count);
      if (!(err instanceof StoreUnavailableError)) throw err;
      count('rejected_unavailable', held.events);
      return { ok: false, rejection: UNAVAILABLE };
    };
  }

  return {
    // Not an async function: its frame, which holds the request body, is gone once the promise
    // chain is built, so the body and the events made from it are not kept alive by the commit wait.
    ingest(input, req) {
      const held = new Holdings();
      const received: Received = {
        input,
        account: req.account,
        connectingIp: req.connectingIp,
        userAgent: req.userAgent,
        now: hooks.clock.now(),
        held,
      };
      return stages.run(received).then(ended(held), failed(held));
    },
  };
}
