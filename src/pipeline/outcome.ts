/** What the pipeline answers for a request, and what became of its events (each outcome a metric label). */
import type { Rejection } from '../event/rejection.js';
import type { WindowStatus } from '../limits/types.js';
import type { EventResult } from './answer.js';
import type { FieldWarning } from './unknown-fields.js';

export type IngestOutcome =
  | {
      readonly ok: true;
      readonly results: readonly EventResult[];
      /** Each event's unknown fields, by request index; undefined when no event has any. */
      readonly warnings?: readonly (readonly FieldWarning[] | undefined)[];
      readonly limit: WindowStatus;
      readonly replayed: boolean;
    }
  | {
      readonly ok: false;
      readonly rejection: Rejection;
      readonly limit?: WindowStatus;
    };

export type Answered = Extract<IngestOutcome, { ok: true }>;

/** The answer to a request whose events each have theirs, with its warnings when it has any. */
export function answered(
  results: readonly EventResult[],
  request: { readonly limit: WindowStatus; readonly warnings: readonly (readonly FieldWarning[] | undefined)[] | undefined },
  replayed: boolean,
): Answered {
  const { limit, warnings } = request;
  return warnings === undefined ? { ok: true, results, limit, replayed } : { ok: true, results, warnings, limit, replayed };
}

/** What became of an event that reached the pipeline: each outcome has a metric label. */
export type EventOutcome =
  | 'accepted'
  | 'dropped_quota'
  | 'dropped_suppressed'
  | 'duplicate'
  | 'rejected_conflict'
  | 'rejected_invalid'
  | 'rejected_rate_limited'
  | 'rejected_unavailable';
