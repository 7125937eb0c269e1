import { describe, expect, it } from 'vitest';
import type { AccountContext } from '../../src/event/account.js';
import type { AlertHit } from '../../src/event/alert.js';
import type { ValidatedEvent } from '../../src/event/types.js';
import { classifyStage } from '../../src/pipeline/classify.js';
import { inOrder, type IngestStages } from '../../src/pipeline/compose.js';
import { dedupeStage, type Seen } from '../../src/pipeline/dedupe.js';
import { detectStage, type DetectStage } from '../../src/pipeline/detect.js';
import { enrichStage } from '../../src/pipeline/enrich.js';
import { createIngestPipeline } from '../../src/pipeline/ingest-pipeline.js';
import { limitStage } from '../../src/pipeline/limit.js';
import { lookUpStage, modelStage } from '../../src/pipeline/model.js';
import { quotaStage } from '../../src/pipeline/quota.js';
import { suppressStage } from '../../src/pipeline/suppress.js';
import { IngestRequest } from '../../src/pipeline/request.js';
import { scoreStage } from '../../src/pipeline/score.js';
import { storeStage } from '../../src/pipeline/store.js';
import { validateStage } from '../../src/pipeline/validate.js';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';
import { StoreUnavailableError } from '../../src/storage/store.js';
import type { AlertWrite, CommitBatch } from '../../src/storage/types.js';
import type { ThreatModelStage } from '../../src/threat-models/stage.js';
import { ManualClock } from '../../src/util/clock.js';

const ctx = {
  account: { id: 'acc_1', name: 'a', plan: 'pro', createdAt: 0, settings: {} },
  plan: DEFAULT_PLANS.pro,
  keyId: 'key_1',
  keyKind: 'secret',
  principal: { kind: 'key', keyId: 'key_1', keyPrefix: 'vgl_sk_test', scopes: ['ingest', 'read', 'manage'] },
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
const hit = (id: string, detector: string): AlertHit => ({ id, type: `${detector}.hit`, severity: 'high', subject: 'actor:u1', opened: true, detector });
const write = (id: string) => ({ alert: { id }, opened: true }) as unknown as AlertWrite;

/** Every event new, every id claimed by this request. */
const allFresh = (events: readonly ValidatedEvent[], settle: (ok: boolean) => void): Seen => ({
  results: new Array(events.length),
  conflicts: 0,
  fresh: events.map((_, i) => i),
  firstIndexOf: new Map(),
  settle,
});

/** The pipeline's stages over stand-in backends that record what they are asked, in order; `overrides` replaces some. */
function recorded(
  events: ValidatedEvent[],
  overrides: Partial<IngestStages> = {},
  options: { kind?: 'single' | 'batch'; seen?: Seen; validateBodies?: boolean } = {},
) {
  const calls: string[] = [];
  const released: string[] = [];
  const committed: CommitBatch[] = [];
  const detect: DetectStage = Object.assign(async () => ({ alerts: [], writes: [] }), {
    many: async (items: readonly unknown[]) => (
      calls.push(`detect:${items.length}`),
      items.map((_, n) => ({ alerts: [hit(`alr_d${n}`, 'brute_force')], writes: [write(`alr_d${n}`)] }))
    ),
  });
  const windows = async (_c: AccountContext, n: number) => (calls.push(n === 0 ? 'limit:0' : 'limit'), { ok: true as const, status });
  const stages: IngestStages = {
    validate: options.validateBodies
      ? validateStage(windows)
      : ({ account, now, held }) => (
          calls.push('validate'),
          (held.events = events.length),
          new IngestRequest(options.kind ?? 'batch', account, now, events, undefined, held)
        ),
    limit: limitStage(windows),
    dedupe: dedupeStage(async (evs) => (calls.push('dedupe'), options.seen ?? allFresh(evs, (ok) => released.push(`settle:${ok}`)))),
    suppress: suppressStage(undefined),
    quota: quotaStage(
      async (_c, n) => (calls.push(`quota:${n}`), { accepted: n, dropped: 0, period: '2026-01', usage: [], release: async () => void released.push('quota') }),
    ),
    classify: classifyStage(
      (e) => (
        calls.push('classify'),
        Object.assign(e, { classification: { predefined: true, baseScore: 10, inferred: [], families: new Set<never>(), detectors: [] } })
      ),
    ),
    enrich: enrichStage((e) => (calls.push('enrich'), Object.assign(e, { enrichment: {} }))),
    minimise: (request) => (calls.push('minimise'), request),
    lookUp: lookUpStage(undefined),
    detect: detectStage(detect),
    model: modelStage(undefined),
    score: scoreStage((e) => (calls.push(`score:${e.alerts.length}`), { score: 10, level: 'low', action: 'allow', breakdown: [] })),
    store: storeStage(async (batch) => void (calls.push(`store:${batch.events.length}`), committed.push(batch))),
    ...overrides,
  };
  const outcomes: string[] = [];
  const pipeline = createIngestPipeline(inOrder(stages), { clock: new ManualClock(), onEvents: (o, n) => outcomes.push(`${o}:${n}`) });
  const ingest = (body: unknown = {}) => pipeline.ingest({ kind: options.kind ?? 'batch', body }, { account: ctx, connectingIp: '127.0.0.1' });
  return { calls, released, outcomes, committed, ingest };
}

describe('ingest pipeline: stage order and each stage ending the request', () => {
  it('runs validate, limit, dedupe, quota, then classify, enrich, minimise, detect, score over the admitted events, and stores once', async () => {
    const r = recorded([event(1), event(2)]);
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: true, replayed: false });
    expect(r.calls).toEqual([
      'validate',
      'limit',
      'dedupe',
      'quota:2',
      'classify',
      'classify',
      'enrich',
      'enrich',
      'minimise',
      'detect:2',
      'score:1',
      'score:1',
      'store:2',
    ]);
    expect(r.released).toEqual(['settle:true']);
    expect(r.outcomes).toEqual(['accepted:2']);
    expect(r.committed[0]?.alerts.map((w) => w.alert.id)).toEqual(['alr_d0', 'alr_d1']);
  });

  it('an invalid request takes one request from the per-second window and nothing else: no events, quota, detection or store', async () => {
    const r = recorded([], {}, { kind: 'single', validateBodies: true });
    const out = await r.ingest({ event: 42 });
    expect(out).toMatchObject({ ok: false, rejection: { code: 'INVALID_EVENT' }, limit: status });
    expect(r.calls).toEqual(['limit:0']);
    expect(r.outcomes).toEqual(['rejected_invalid:1']);
  });

  it('a rate-limited request stops before dedupe and quota', async () => {
    const r = recorded([event(1)], {
      limit: limitStage(async () => ({ ok: false, status, rejection: { code: 'RATE_LIMITED', message: 'slow down', retryAfter: 3 } })),
    });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: false, rejection: { code: 'RATE_LIMITED', retryAfter: 3 } });
    expect(r.calls).toEqual(['validate']);
    expect(r.outcomes).toEqual(['rejected_rate_limited:1']);
  });

  it('events the quota drops are never classified, enriched or detected, and are counted once the rest committed', async () => {
    const r = recorded([event(1), event(2), event(3)], {
      quota: quotaStage(async () => ({ accepted: 1, dropped: 2, period: '2026-01', usage: [], release: async () => undefined })),
    });
    const out = await r.ingest();
    expect(out.ok && out.results.map((x) => x.status)).toEqual(['accepted', 'dropped', 'dropped']);
    expect(r.calls.filter((c) => c === 'classify')).toHaveLength(1);
    expect(r.calls).toContain('detect:1');
    expect(r.outcomes).toEqual(['accepted:1', 'dropped_quota:2']);
  });

  it('when the store does not commit: the quota is given back, claims are released, and the answer is 503 UNAVAILABLE', async () => {
    const r = recorded([event(1, 'e1')], {
      store: storeStage(async () => {
        throw new StoreUnavailableError('down');
      }),
    });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: false, rejection: { code: 'UNAVAILABLE', retryAfter: 1 } });
    expect(r.released).toEqual(['settle:false', 'quota']);
    expect(r.outcomes).toEqual(['rejected_unavailable:1']);
  });

  it('when a stage after the quota fails otherwise: the quota is given back, claims are released, and the failure is thrown', async () => {
    const r = recorded([event(1, 'e1')], {
      enrich: enrichStage(() => {
        throw new Error('enricher bug');
      }),
    });
    await expect(r.ingest()).rejects.toThrow('enricher bug');
    expect(r.released).toEqual(['settle:false', 'quota']);
    expect(r.calls).not.toContain('detect:1');
    expect(r.outcomes).toEqual([]);
  });

  it('a request of repeats only ends at dedupe: no quota, no detection, no commit', async () => {
    const answered = { status: 'dropped' as const };
    const seen: Seen = { results: [answered], conflicts: 0, fresh: [], firstIndexOf: new Map([['e1', 0]]), settle: () => undefined };
    const r = recorded([event(1, 'e1')], {}, { seen });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: true, replayed: true, results: [answered], limit: status });
    expect(r.calls).toEqual(['validate', 'limit', 'dedupe']);
    expect(r.outcomes).toEqual(['duplicate:1']);
  });

  it("a single event whose event_id came with another payload is refused at dedupe with 409's code", async () => {
    const conflict = { status: 'rejected' as const, error: 'IDEMPOTENCY_CONFLICT' as const, message: 'used' };
    const seen: Seen = { results: [conflict], conflicts: 1, fresh: [], firstIndexOf: new Map([['e1', 0]]), settle: () => undefined };
    const r = recorded([event(1, 'e1')], {}, { kind: 'single', seen });
    const out = await r.ingest();
    expect(out).toMatchObject({ ok: false, rejection: { code: 'IDEMPOTENCY_CONFLICT', message: 'used' }, limit: status });
    expect(r.calls).toEqual(['validate', 'limit', 'dedupe']);
    expect(r.outcomes).toEqual(['rejected_conflict:1']);
  });

  it("threat models run after detect: their alerts join the event's before it is scored, their rows follow the detectors' per event", async () => {
    const asked: string[] = [];
    const models: ThreatModelStage = {
      lookup: () => (asked.push('lookup'), [{ id: 'tm_1' }] as never),
      run: (_m, events, ids) => (
        asked.push(`run:${ids.join(',')}`),
        Promise.resolve(events.map((_, n) => (n === 0 ? { alerts: [hit('alr_m0', 'threat_model')], writes: [write('alr_m0')] } : { alerts: [], writes: [] })))
      ),
    };
    const r = recorded([event(1), event(2)], { lookUp: lookUpStage(models), model: modelStage(models) });
    const out = await r.ingest();
    expect(asked).toEqual(['lookup', expect.stringMatching(/^run:evt_\w+,evt_\w+$/)]);
    expect(r.calls).toEqual(expect.arrayContaining(['score:2', 'score:1']));
    expect(out.ok && out.results.map((x) => (x.status === 'accepted' ? x.alerts.map((a) => a.id) : []))).toEqual([['alr_d0', 'alr_m0'], ['alr_d1']]);
    expect(r.committed[0]?.alerts.map((w) => w.alert.id)).toEqual(['alr_d0', 'alr_m0', 'alr_d1']);
  });
});
