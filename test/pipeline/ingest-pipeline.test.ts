import { describe, expect, it } from 'vitest';
import type { AccountContext } from '../../src/event/account.js';
import type { ValidatedEvent } from '../../src/event/types.js';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';
import { createIngestPipeline, type IngestStages } from '../../src/pipeline/ingest-pipeline.js';
import { StoreUnavailableError } from '../../src/storage/store.js';
import { ManualClock } from '../../src/util/clock.js';

const ctx = {
  account: { id: 'acc_1', name: 'a', plan: 'pro', createdAt: 0, settings: {} },
  plan: DEFAULT_PLANS.pro,
  keyId: 'key_1',
  keyKind: 'secret',
} satisfies AccountContext;
const status = { limit: 1000, remaining: 999, resetAt: 0 };
const event = (n: number, eventId?: string): ValidatedEvent => ({
  type: 'auth.login.failure',
  occurredAt: 0,
  receivedAt: 0,
  actorId: `u${n}`,
  metadata: {},
  eventId,
});

/** Stages that record the order they run in; `overrides` replaces some of them. */
function recorded(events: ValidatedEvent[], overrides: Partial<IngestStages> = {}) {
  const calls: string[] = [];
  const released: string[] = [];
  const stages: IngestStages = {
    validate: () => (calls.push('validate'), { ok: true, events }),
    limit: async (_c, n) => (calls.push(n === 0 ? 'limit:0' : 'limit'), { ok: true, status }),
    dedupe: async (evs) => (
      calls.push('dedupe'),
      { results: new Array(evs.length), conflicts: 0, fresh: evs.map((_, i) => i), firstIndexOf: new Map(), settle: (ok) => released.push(`settle:${ok}`) }
    ),
    quota: async (_c, n) => (
      calls.push(`quota:${n}`),
      { accepted: n, dropped: 0, period: '2026-01', usage: [], release: async () => void released.push('quota') }
    ),
    classify: (e) => (calls.push('classify'), { ...e, classification: { predefined: true, baseScore: 10, inferred: [], families: new Set(), detectors: [] } }),
    enrich: (e) => (calls.push('enrich'), { ...e, enrichment: {} }),
    detect: Object.assign(async () => ({ alerts: [], writes: [] }), {
      many: async (items: readonly unknown[]) => (calls.push(`detect:${items.length}`), items.map(() => ({ alerts: [], writes: [] }))),
    }),
    score: () => (calls.push('score'), { score: 10, level: 'low', action: 'allow', breakdown: [] }),
    store: async (batch) => void calls.push(`store:${batch.events.length}`),
    ...overrides,
  };
  const outcomes: string[] = [];
  const pipeline = createIngestPipeline(stages, { clock: new ManualClock(), onEvents: (o, n) => outcomes.push(`${o}:${n}`) });
  const ingest = () => pipeline.ingest({ kind: 'batch', body: {} }, { account: ctx, connectingIp: '127.0.0.1' });
  return { calls, released, outcomes, ingest };
}

describe('ingest pipeline: stage order and short-circuits', () => {
  it('runs validate, limit, dedupe, quota, classify+enrich per event, detect once, score per event, store once', async () => {
    const r = recorded([event(1), event(2)]);
    const out = await r.ingest();
    expect(out.ok).toBe(true);
    expect(r.calls).toEqual(['validate', 'limit', 'dedupe', 'quota:2', 'classify', 'enrich', 'classify', 'enrich', 'detect:2', 'score', 'score', 'store:2']);
    expect(r.released).toEqual(['settle:true']);
    expect(r.outcomes).toEqual(['accepted:2']);
  });

  it('an invalid request takes one request from the per-second window and nothing else: no events, quota, detection or store', async () => {
    const r = recorded([], { validate: () => ({ ok: false, rejection: { code: 'INVALID_EVENT', message: 'bad' } }) });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: false, rejection: { code: 'INVALID_EVENT' } });
    expect(r.calls).toEqual(['limit:0']);
    expect(r.outcomes).toEqual(['rejected_invalid:1']);
  });

  it('a rate-limited request stops before dedupe and quota', async () => {
    const r = recorded([event(1)], { limit: async () => ({ ok: false, status, rejection: { code: 'RATE_LIMITED', message: 'slow down', retryAfter: 3 } }) });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: false, rejection: { code: 'RATE_LIMITED', retryAfter: 3 } });
    expect(r.calls).toEqual(['validate']);
    expect(r.outcomes).toEqual(['rejected_rate_limited:1']);
  });

  it('events the quota drops are never classified, enriched or detected', async () => {
    const r = recorded([event(1), event(2), event(3)], {
      quota: async () => ({ accepted: 1, dropped: 2, period: '2026-01', usage: [], release: async () => undefined }),
    });
    const out = await r.ingest();
    expect(out.ok && out.results.map((x) => x.status)).toEqual(['accepted', 'dropped', 'dropped']);
    expect(r.calls.filter((c) => c === 'classify')).toHaveLength(1);
    expect(r.calls).toContain('detect:1');
  });

  it('when the store does not commit: the quota is given back, claims are released, and the answer is 503 UNAVAILABLE', async () => {
    const r = recorded([event(1, 'e1')], {
      store: async () => {
        throw new StoreUnavailableError('down');
      },
    });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: false, rejection: { code: 'UNAVAILABLE', retryAfter: 1 } });
    expect(r.released).toEqual(['settle:false', 'quota']);
    expect(r.outcomes).toEqual(['rejected_unavailable:1']);
  });

  it('a request of repeats only reserves no quota and reaches no detection', async () => {
    const answered = { status: 'dropped' as const };
    const r = recorded([event(1, 'e1')], {
      dedupe: async () => ({ results: [answered], conflicts: 0, fresh: [], firstIndexOf: new Map([['e1', 0]]), settle: () => undefined }),
    });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: true, replayed: true, results: [answered] });
    expect(r.calls).toEqual(['validate', 'limit', 'quota:0', 'store:0']);
  });
});
