import type { ValidatedEvent } from '../event/types.js';
import type { SuppressionList, Suppressions } from '../privacy/suppression.js';
import type { EventResult } from './answer.js';
import type { Deduplicated, Screened } from './request.js';
import type { Stage } from './stage.js';

const DROPPED: EventResult = Object.freeze({ status: 'dropped' });

/**
 * New events whose actor id, email, address or device id the account suppresses (an erased
 * subject's, for the days the erasure asked) are answered `dropped`, as the month's cap answers,
 * and go no further: they are not counted in the quota, not enriched, not learned by detection
 * and not stored. Only the suppressed events of a batch are left out; the others go on.
 */
export function suppressStage(list: SuppressionList | undefined): Stage<Deduplicated, Screened> {
  const unchanged = (request: Deduplicated): Screened => Object.assign(request, { unsuppressed: request.seen.fresh });

  function screen(request: Deduplicated, suppressions: Suppressions): Screened {
    if (suppressions.empty) return unchanged(request);
    const { events, now } = request;
    const { fresh, results } = request.seen;
    const kept: number[] = [];
    for (const i of fresh) {
      if (suppressions.suppresses(events[i] as ValidatedEvent, now)) results[i] = DROPPED;
      else kept.push(i);
    }
    request.held.suppressed = fresh.length - kept.length;
    return Object.assign(request, { unsuppressed: kept.length === fresh.length ? fresh : kept });
  }

  return (request) => {
    if (list === undefined || request.seen.fresh.length === 0) return unchanged(request);
    const found = list.inForce(request.account.account.id, request.now, request.account.stamps);
    return found instanceof Promise ? found.then((suppressions) => screen(request, suppressions)) : screen(request, found);
  };
}
