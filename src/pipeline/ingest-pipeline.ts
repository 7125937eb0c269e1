/**
 * The ingestion of one request as the flat sequence of its stages. Their order, and why:
 *
 *   validate  — cheapest, and a bad request consumes no events (minute window, quota); it still
 *               counts as one request in the key's per-second window.
 *   limit     — per-key windows; a 429 is decided before any work.
 *   dedupe    — a repeated event_id answers with the first result; it must not reach the quota.
 *   quota     — decides accept or drop before enrichment and detection are spent on an event.
 *   classify  — catalog lookup: base score, inferred types, and which detectors may fire.
 *   enrich    — GeoIP, ASN, threat intel, user agent, email, password, request scan.
 *   detect    — needs enrichment (locations, feeds) and updates shared window state.
 *   score     — needs the alerts from detect.
 *   store     — group commit; the 202 is sent only after the event's transaction committed.
 *
 * Authentication and the per-IP cap run earlier, in the HTTP layer (src/http/guards.ts), because
 * they apply to every /v1 request, including ones whose body is never read. The stages are built
 * in one place, compose.ts.
 */
import type { AccountContext } from '../event/account.js';
import { reject, type Rejection } from '../event/rejection.js';
import type { ValidatedEvent } from '../event/types.js';
import type { WindowStatus } from '../limits/types.js';
import { StoreUnavailableError } from '../storage/store.js';
import type { AlertWrite, CommitBatch, IdempotencyRow, NewEventRow } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';
import { toEventResult, toEventRow, type EventResult } from './answer.js';
import type { ClassifyStage } from './classify.js';
import type { DedupeStage, Deduplicated } from './dedupe.js';
import type { DetectStage } from './detect.js';
import type { EnrichStage } from './enrich.js';
import type { LimitStage } from './limit.js';
import type { QuotaReservation, QuotaStage } from './quota.js';
import type { ScoreStage } from './score.js';
import type { StoreStage } from './store.js';
import type { IngestInput, ValidateStage } from './validate.js';
import { familyOf, type FieldWarning } from './unknown-fields.js';

export type { IngestInput } from './validate.js';

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

/** What became of an event that reached the pipeline: each outcome has a metric label. */
export type EventOutcome =
  'accepted' | 'dropped_quota' | 'duplicate' | 'rejected_conflict' | 'rejected_invalid' | 'rejected_rate_limited' | 'rejected_unavailable';

export interface IngestStages {
  readonly validate: ValidateStage;
  readonly limit: LimitStage;
  readonly dedupe: DedupeStage;
  readonly quota: QuotaStage;
  readonly classify: ClassifyStage;
  readonly enrich: EnrichStage;
  readonly detect: DetectStage;
  readonly score: ScoreStage;
  readonly store: StoreStage;
}

export interface IngestHooks {
  readonly clock: Clock;
  readonly onEvents?: (outcome: EventOutcome, count: number) => void;
  /** One unknown field in an accepted request, by family (the field it most likely meant, or `unrecognised`). */
  readonly onUnknownField?: (family: string) => void;
  /** True while shared state is unreachable and local fallbacks serve limits and detection. */
  readonly degraded?: () => boolean;
}

export interface IngestRequestContext {
  readonly account: AccountContext;
  readonly connectingIp: string;
}

export interface IngestPipeline {
  ingest(input: IngestInput, req: IngestRequestContext): Promise<IngestOutcome>;
}

const UNAVAILABLE: Rejection = {
  code: 'UNAVAILABLE',
  message: 'Storage is unavailable; the event was not accepted. Retry with the same event_id.',
  retryAfter: 1,
};

/** A request whose events are ready to commit: what the answer needs once they have. */
interface Prepared {
  readonly batch: CommitBatch;
  readonly results: EventResult[];
  readonly quota: QuotaReservation;
  readonly seen: Deduplicated;
  readonly limit: WindowStatus;
  readonly replayed: boolean;
}

export function createIngestPipeline(stages: IngestStages, hooks: IngestHooks): IngestPipeline {
  const count = (outcome: EventOutcome, n: number) => {
    if (n > 0) hooks.onEvents?.(outcome, n);
  };

  /**
   * Every stage up to the commit. The events, their enrichment and detection live only in this
   * call: once it returns, the request holds its rows and results, and nothing else of its
   * events stays alive while the commit runs.
   */
  async function prepare(events: readonly ValidatedEvent[], ctx: AccountContext, now: number): Promise<Prepared | IngestOutcome> {
    const limit = await stages.limit(ctx, events.length, now);
    if (!limit.ok) {
      count('rejected_rate_limited', events.length);
      return { ok: false, limit: limit.status, rejection: limit.rejection };
    }

    const seen = await stages.dedupe(events, ctx, now);
    const { fresh } = seen;
    const results = seen.results;
    count('duplicate', events.length - fresh.length - seen.conflicts);
    count('rejected_conflict', seen.conflicts);

    let quota: QuotaReservation | undefined;
    try {
      quota = await stages.quota(ctx, fresh.length, now);
      for (const i of fresh.slice(quota.accepted)) results[i] = { status: 'dropped' };
      const accepted = fresh
        .slice(0, quota.accepted)
        .map((i) => ({ i, eventId: newId('evt', now), event: stages.enrich(stages.classify(events[i] as ValidatedEvent)) }));
      // Detection of the accepted events runs as one batch (pipelined on a remote state store).
      const detections = accepted.length === 0 ? [] : await stages.detect.many(accepted, ctx);
      const rows: NewEventRow[] = [];
      const alerts: AlertWrite[] = [];
      const idempotency: IdempotencyRow[] = [];
      const degraded = hooks.degraded?.() ?? false;
      for (let n = 0; n < accepted.length; n++) {
        const { i, eventId: id, event } = accepted[n] as (typeof accepted)[number];
        const detection = detections[n] as (typeof detections)[number];
        const detected = Object.assign(
          event,
          detection.standing === undefined ? { alerts: detection.alerts } : { alerts: detection.alerts, standing: detection.standing },
        );
        const scored = Object.assign(detected, { id, risk: stages.score(detected, ctx) });
        const result = toEventResult(scored, degraded);
        results[i] = result;
        rows.push(toEventRow(scored, ctx, result));
        for (const write of detection.writes) alerts.push(write);
        const eventId = (events[i] as ValidatedEvent).eventId;
        if (eventId !== undefined)
          idempotency.push({
            accountId: ctx.account.id,
            eventId,
            response: result,
            createdAt: now,
            payloadDigest: (events[i] as ValidatedEvent).payloadDigest ?? null,
          });
      }
      // Repeats inside one batch answer with their first occurrence's result.
      for (let i = 0; i < events.length; i++) {
        if (results[i] === undefined) results[i] = results[seen.firstIndexOf.get((events[i] as ValidatedEvent).eventId as string) as number];
      }
      return {
        batch: { events: rows, alerts, usage: quota.usage, idempotency },
        results: results as EventResult[],
        quota,
        seen,
        limit: limit.status,
        replayed: fresh.length === 0 && seen.conflicts === 0,
      };
    } catch (err) {
      await giveBack(seen, quota);
      throw err;
    }
  }

  /** Claims and quota of events that were not stored are given back. */
  async function giveBack(seen: Deduplicated, quota: QuotaReservation | undefined): Promise<void> {
    seen.settle(false);
    await quota?.release().catch(() => undefined);
  }

  /** The prepared rows' commit; the 202 follows it. */
  async function commit(prepared: Prepared): Promise<IngestOutcome> {
    const { seen, quota } = prepared;
    try {
      await stages.store(prepared.batch);
    } catch (err) {
      await giveBack(seen, quota);
      throw err;
    }
    seen.settle(true);
    count('accepted', quota.accepted);
    count('dropped_quota', quota.dropped);
    return { ok: true, results: prepared.results, limit: prepared.limit, replayed: prepared.replayed };
  }

  /** The pipeline's answer to a request whose events were valid. */
  function answer(outcome: IngestOutcome, kind: IngestInput['kind'], warnings: readonly (readonly FieldWarning[] | undefined)[] | undefined): IngestOutcome {
    if (!outcome.ok) return outcome;
    // A single event has no per-event answer to carry the conflict: the request is refused.
    const only = outcome.results[0];
    if (kind === 'single' && only?.status === 'rejected') return { ok: false, rejection: reject(only.error, only.message), limit: outcome.limit };
    return warnings !== undefined ? Object.assign({}, outcome, { warnings }) : outcome;
  }

  function unavailable(events: number): (err: unknown) => IngestOutcome {
    return (err) => {
      if (!(err instanceof StoreUnavailableError)) throw err;
      count('rejected_unavailable', events);
      return { ok: false, rejection: UNAVAILABLE };
    };
  }

  async function refuse(rejection: Rejection, account: AccountContext, now: number): Promise<IngestOutcome> {
    // A rejected request still counts against the key's per-second window (no events against
    // the minute window): a key, publishable ones included, cannot have invalid bodies checked
    // faster than its plan's requests per second. Over that window the answer is the 429.
    const limit = await stages.limit(account, 0, now);
    if (!limit.ok) {
      count('rejected_rate_limited', 1);
      return { ok: false, limit: limit.status, rejection: limit.rejection };
    }
    count('rejected_invalid', 1);
    return { ok: false, rejection, limit: limit.status };
  }

  return {
    // Not an async function: its frame, which holds the request body, is gone once the promise
    // chain is built, so the body and the events made from it are not kept alive by the commit wait.
    ingest(input, req) {
      const now = hooks.clock.now();
      const validated = stages.validate(input, req.account, req.connectingIp, now);
      if (!validated.ok) return refuse(validated.rejection, req.account, now);
      const { kind } = input;
      const { events, warnings } = validated;
      if (warnings !== undefined && hooks.onUnknownField !== undefined)
        for (const list of warnings) for (const warning of list ?? []) hooks.onUnknownField(familyOf(warning));
      return prepare(events, req.account, now)
        .then((prepared) => ('batch' in prepared ? commit(prepared) : prepared))
        .then((outcome) => answer(outcome, kind, warnings), unavailable(events.length));
    },
  };
}
