/**
 * The one place that fixes the order of the ingestion stages, and why:
 *
 *   validate  — cheapest, and a bad request consumes no events (minute window, quota); it still
 *               counts as one request in the key's per-second window.
 *   limit     — per-key windows; a 429 is decided before any work.
 *   dedupe    — a repeated event_id answers with the first result; it must not reach the quota.
 *   quota     — decides accept or drop before we spend enrichment and detection on an event.
 *   classify  — catalog lookup: base score, inferred types, and which detectors may fire.
 *   enrich    — GeoIP, ASN, threat intel, user agent, email, password, request scan.
 *   detect    — needs enrichment (locations, feeds) and updates shared window state.
 *   score     — needs the alerts from detect.
 *   store     — group commit; the 202 is sent only after the event's transaction committed.
 *
 * Authentication and the per-IP cap run earlier, in the HTTP layer (src/http/guards.ts),
 * because they apply to every /v1 request, including ones whose body is never read.
 */
import { MAX_ERROR_DETAILS, reject, type Rejection } from '../http/errors.js';
import { dayOf, monthOf, type LimitDecision, type QuotaCounter, type QuotaDecision, type RateLimiter, type WindowStatus } from '../limits/types.js';
import type { Store } from '../storage/store.js';
import { StoreUnavailableError } from '../storage/store.js';
import type { AlertWrite, CommitBatch, EventRow, IdempotencyRow } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';
import type { AccountContext } from './account-context.js';
import type { ClassifyStage } from './classify.js';
import type { CommitGroup } from './commit-group.js';
import type { Detection, DetectStage } from './detect.js';
import type { EnrichStage } from './enrich.js';
import type { ScoreStage } from './score.js';
import { toEventResult, toEventRow, type EventResult } from './store.js';
import type { ValidatedEvent } from './types.js';
import { validateEvent } from './validate.js';
import { InFlightEvents } from './in-flight.js';

export const IDEMPOTENCY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

export type IngestInput = { readonly kind: 'single'; readonly body: unknown } | { readonly kind: 'batch'; readonly body: unknown };

export type IngestOutcome =
  | {
      readonly ok: true;
      readonly results: readonly EventResult[];
      readonly limit: WindowStatus;
      readonly replayed: boolean;
    }
  | {
      readonly ok: false;
      readonly rejection: Rejection;
      readonly limit?: WindowStatus;
    };

/** Why an event did not become a stored event: each has a metric label. */
export type EventOutcome = 'accepted' | 'dropped_quota' | 'duplicate' | 'rejected_invalid' | 'rejected_rate_limited' | 'rejected_unavailable';

export interface IngestDeps {
  readonly limiter: RateLimiter;
  readonly quota: QuotaCounter;
  readonly classify: ClassifyStage;
  readonly enrich: EnrichStage;
  readonly detect: DetectStage;
  readonly score: ScoreStage;
  readonly commits: CommitGroup;
  readonly store: Store;
  readonly clock: Clock;
  readonly onEvents?: (outcome: EventOutcome, count: number) => void;
  /** True while shared state is unreachable and local fallbacks serve limits and detection. */
  readonly degraded?: () => boolean;
}

export interface IngestRequestContext {
  readonly account: AccountContext;
  readonly connectingIp: string;
}

type Validated = { ok: true; events: ValidatedEvent[] } | { ok: false; rejection: Rejection };

function validateInput(input: IngestInput, req: IngestRequestContext, receivedAt: number): Validated {
  const defaultIp = req.account.keyKind === 'publishable' ? req.connectingIp : undefined;
  if (input.kind === 'single') {
    const result = validateEvent(input.body, { receivedAt, defaultIp });
    return result.ok
      ? { ok: true, events: [result.event] }
      : {
          ok: false,
          rejection: reject('INVALID_EVENT', result.errors[0]?.message ?? 'invalid event', result.errors),
        };
  }
  const plan = req.account.plan;
  if (plan.batchMax === 0)
    return {
      ok: false,
      rejection: reject(
        'PLAN_UPGRADE_REQUIRED',
        `The batch endpoint is not available on the ${plan.name} plan; send events one by one to POST /v1/events or upgrade.`,
      ),
    };
  const body = input.body as { events?: unknown } | null;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Array.isArray(body.events)) {
    return {
      ok: false,
      rejection: reject('INVALID_EVENT', 'a batch must be a JSON object {"events": [event, ...]}', [{ field: 'events', message: 'events must be an array' }]),
    };
  }
  // Tens of thousands of unknown keys are possible: only the first are described.
  const extraKeys: string[] = [];
  let extraCount = 0;
  for (const key of Object.keys(body)) {
    if (key === 'events') continue;
    if (extraKeys.length < MAX_ERROR_DETAILS) extraKeys.push(key);
    extraCount++;
  }
  if (extraCount > 0)
    return {
      ok: false,
      rejection: {
        code: 'INVALID_EVENT',
        message: `unknown field "${extraKeys[0]}" in batch body${extraCount > 1 ? ` (and ${extraCount - 1} more)` : ''}`,
        details: extraKeys.map((k) => ({ field: k, message: 'unknown batch field' })),
        detailsTotal: extraCount,
      },
    };
  const raw = body.events;
  if (raw.length === 0)
    return {
      ok: false,
      rejection: reject('INVALID_EVENT', 'events must not be empty', [{ field: 'events', message: 'events must not be empty' }]),
    };
  if (raw.length > plan.batchMax) {
    return {
      ok: false,
      rejection: reject(
        'BATCH_TOO_LARGE',
        `The ${plan.name} plan accepts at most ${plan.batchMax} events per batch; this batch has ${raw.length}. Nothing was accepted.`,
      ),
    };
  }
  const events: ValidatedEvent[] = [];
  const details = [];
  for (let index = 0; index < raw.length; index++) {
    const result = validateEvent(raw[index], { receivedAt, defaultIp });
    if (result.ok) events.push(result.event);
    else for (const e of result.errors) details.push({ index, field: e.field, message: e.message });
  }
  if (details.length > 0) {
    const first = details[0] as { index: number; message: string };
    return {
      ok: false,
      rejection: reject('INVALID_EVENT', `event ${first.index}: ${first.message} (the whole batch was rejected; nothing was stored)`, details),
    };
  }
  return { ok: true, events };
}

function rateLimited(limit: Extract<LimitDecision, { allowed: false }>): IngestOutcome {
  const seconds = limit.retryAfter;
  const message = `Rate limit exceeded. Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`;
  return { ok: false, limit: limit.status, rejection: { code: 'RATE_LIMITED', message, retryAfter: seconds } };
}

export function createIngestPipeline(deps: IngestDeps) {
  const inFlight = new InFlightEvents();
  const count = (outcome: EventOutcome, n: number) => {
    if (n > 0) deps.onEvents?.(outcome, n);
  };

  async function previousResult(accountId: string, eventId: string, now: number): Promise<EventResult | undefined> {
    const running = await inFlight.wait(accountId, eventId);
    if (running) return running;
    const row = await deps.store.findIdempotency(accountId, eventId, now - IDEMPOTENCY_WINDOW_MS);
    return row?.response as EventResult | undefined;
  }

  /**
   * Finds events answered before (by event_id) and claims the new ones: a claim is taken
   * synchronously after the last lookup, so two concurrent requests never both process one event_id.
   */
  async function deduplicate(events: readonly ValidatedEvent[], accountId: string, now: number, results: (EventResult | undefined)[]) {
    const firstIndexOf = new Map<string, number>();
    const fresh: number[] = [];
    const claims = new Map<number, (result: EventResult | undefined) => void>();
    try {
      for (let i = 0; i < events.length; i++) {
        const eventId = (events[i] as ValidatedEvent).eventId;
        if (eventId !== undefined) {
          if (firstIndexOf.has(eventId)) continue;
          firstIndexOf.set(eventId, i);
          let previous = await previousResult(accountId, eventId, now);
          while (!previous && inFlight.wait(accountId, eventId)) previous = await previousResult(accountId, eventId, now);
          if (previous) {
            results[i] = previous;
            continue;
          }
          claims.set(i, inFlight.begin(accountId, eventId));
        }
        fresh.push(i);
      }
    } catch (err) {
      for (const release of claims.values()) release(undefined);
      throw err;
    }
    return { firstIndexOf, fresh, claims };
  }

  async function process(events: readonly ValidatedEvent[], req: IngestRequestContext, now: number): Promise<IngestOutcome> {
    const ctx = req.account;
    const accountId = ctx.account.id;
    const limit = await deps.limiter.consumeKey(ctx.keyId, ctx.plan, events.length, now);
    if (!limit.allowed) {
      count('rejected_rate_limited', events.length);
      return rateLimited(limit);
    }

    const results: (EventResult | undefined)[] = new Array(events.length);
    const { firstIndexOf, fresh, claims } = await deduplicate(events, accountId, now, results);
    count('duplicate', events.length - fresh.length);

    const period = monthOf(now);
    const rows: EventRow[] = [];
    const alerts: AlertWrite[] = [];
    const idempotency: IdempotencyRow[] = [];
    let quota: QuotaDecision = { accepted: 0, dropped: 0 };
    let committed = false;
    try {
      if (fresh.length > 0) quota = await deps.quota.reserve(accountId, period, fresh.length, ctx.plan);
      for (const i of fresh.slice(quota.accepted)) results[i] = { status: 'dropped' };
      // Detection of the accepted events runs as one batch (pipelined on a remote state store).
      const accepted = fresh
        .slice(0, quota.accepted)
        .map((i) => ({ i, eventId: newId('evt', now), event: deps.enrich(deps.classify(events[i] as ValidatedEvent)) }));
      const detections = await deps.detect.many(accepted, ctx);
      for (const [n, { i, eventId: id, event: enriched }] of accepted.entries()) {
        const validated = events[i] as ValidatedEvent;
        const detection = detections[n] as Detection;
        const detected = { ...enriched, alerts: detection.alerts };
        const scored = { ...detected, id, risk: deps.score(detected, ctx) };
        const result = toEventResult(scored, deps.degraded?.() ?? false);
        results[i] = result;
        rows.push(toEventRow(scored, ctx, result));
        alerts.push(...detection.writes);
        if (validated.eventId !== undefined) idempotency.push({ accountId, eventId: validated.eventId, response: result, createdAt: now });
      }
      const usage = quota.accepted + quota.dropped > 0 ? [{ accountId, period, day: dayOf(now), used: quota.accepted, dropped: quota.dropped }] : [];
      if (rows.length > 0 || usage.length > 0) await deps.commits.add({ events: rows, alerts, usage, idempotency } satisfies CommitBatch);
      committed = true;
    } finally {
      for (const [i, release] of claims) release(committed ? results[i] : undefined);
      if (!committed && quota.accepted + quota.dropped > 0) await deps.quota.release(accountId, period, quota).catch(() => undefined);
    }

    // Repeats inside one batch answer with their first occurrence's result.
    for (let i = 0; i < events.length; i++) {
      if (results[i] === undefined) results[i] = results[firstIndexOf.get((events[i] as ValidatedEvent).eventId as string) as number];
    }
    count('accepted', quota.accepted);
    count('dropped_quota', quota.dropped);
    return { ok: true, results: results as EventResult[], limit: limit.status, replayed: fresh.length === 0 };
  }

  return {
    async ingest(input: IngestInput, req: IngestRequestContext): Promise<IngestOutcome> {
      const now = deps.clock.now();
      const validated = validateInput(input, req, now);
      if (!validated.ok) {
        // A rejected request still counts against the key's per-second window (no events against
        // the minute window): a key, publishable ones included, cannot have invalid bodies checked
        // faster than its plan's requests per second. Over that window the answer is the 429.
        const limit = await deps.limiter.consumeKey(req.account.keyId, req.account.plan, 0, now);
        if (!limit.allowed) {
          count('rejected_rate_limited', 1);
          return rateLimited(limit);
        }
        count('rejected_invalid', 1);
        return { ok: false, rejection: validated.rejection, limit: limit.status };
      }
      try {
        return await process(validated.events, req, now);
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        count('rejected_unavailable', validated.events.length);
        const message = 'Storage is unavailable; the event was not accepted. Retry with the same event_id.';
        return { ok: false, rejection: { code: 'UNAVAILABLE', message, retryAfter: 1 } };
      }
    },
  };
}

export type IngestPipeline = ReturnType<typeof createIngestPipeline>;
