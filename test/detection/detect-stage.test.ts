import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import type { StateOp, StateStore } from '../../src/detection/state/state-store.js';
import { createDetectStage, type Detection } from '../../src/pipeline/detect.js';
import { ManualClock } from '../../src/util/clock.js';
import { accountContext, enriched, type EventSpec } from './helpers.js';

/** A memory store that records the size of every batch it is sent. */
function countingStore(): { store: StateStore; batches: number[] } {
  const inner = new MemoryStateStore({ sweepIntervalMs: 0 });
  const batches: number[] = [];
  const store: StateStore = {
    kind: 'memory',
    run: ((ops: readonly StateOp[]) => {
      batches.push(ops.length);
      return inner.run(ops);
    }) as StateStore['run'],
    scope: (accountId) => inner.scope(accountId),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { store, batches };
}

async function playAll(specs: EventSpec[], settings: Record<string, unknown> = {}, store: StateStore = new MemoryStateStore({ sweepIntervalMs: 0 })) {
  const detect = createDetectStage({ state: store, clock: new ManualClock() });
  const ctx = accountContext(settings);
  const results: Detection[] = [];
  for (const [i, spec] of specs.entries()) results.push(await detect(enriched(spec), ctx, `evt_${i}`));
  return results;
}

const failures = (n: number, extra: Partial<EventSpec> = {}): EventSpec[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'auth.login.failure', actor: 'alice', ip: '198.51.100.66', at: i * 10_000, ...extra }));

describe('detect stage', () => {
  it('writes alert rows with the triggering event ids, and returns hits with the same ids', async () => {
    const results = await playAll(failures(11));
    const opened = results[9];
    expect(opened?.alerts).toEqual([
      {
        id: expect.stringMatching(/^alr_/),
        type: 'auth.brute_force.account',
        severity: 'high',
        subject: 'actor:alice',
        opened: true,
        detector: 'brute_force',
        decision: 'challenge',
      },
    ]);
    expect(opened?.writes[0]).toMatchObject({
      opened: true,
      alert: { accountId: 'acc_test', status: 'open', count: 1, actorId: 'alice', eventIds: ['evt_9'], details: { failures: 10, threshold: 10 } },
    });
    const updated = results[10]?.writes[0];
    expect(updated).toMatchObject({ opened: false, alert: { id: opened?.alerts[0]?.id, count: 2, eventIds: ['evt_9', 'evt_10'] } });
    expect(updated?.alert.lastSeen).toBe(updated!.alert.firstSeen + 10_000);
  });

  it('runs only the detectors the classification names', async () => {
    const specs = failures(12).map((s) => enriched(s));
    const detect = createDetectStage({ state: new MemoryStateStore({ sweepIntervalMs: 0 }) });
    const ctx = accountContext();
    let hits = 0;
    for (const e of specs) hits += (await detect({ ...e, classification: { ...e.classification, detectors: ['credential_spray'] } }, ctx)).alerts.length;
    expect(hits).toBe(0);
  });

  it('sends a benign event in one batch, and no batch at all when nothing applies', async () => {
    const { store, batches } = countingStore();
    await playAll(
      [
        {
          type: 'auth.login.success',
          actor: 'alice',
          ip: '203.0.113.10',
          ua: 'Chrome/Windows',
          geo: { country: 'FR', lat: 48.85, lon: 2.35, radius: 10 },
          session: 's1',
        },
      ],
      {},
      store,
    );
    expect(batches).toHaveLength(1);
    expect(batches[0]).toBeGreaterThan(3);
    await playAll([{ type: 'custom.thing.done', ip: '203.0.113.10' }], {}, store);
    expect(batches).toHaveLength(1);
    // An event of an actor reads, in one op, whether an alert stands over the actor.
    await playAll([{ type: 'custom.thing.done', actor: 'alice' }], {}, store);
    expect(batches).toEqual([batches[0], 1]);
  });

  it('links the stages of a kill chain to their events and alerts', async () => {
    const results = await playAll([
      ...failures(10),
      { type: 'auth.login.success', actor: 'alice', ip: '198.51.100.66', at: 180_000 },
      { type: 'auth.mfa.disabled', actor: 'alice', ip: '198.51.100.66', at: 1_200_000 },
    ]);
    const last = results.at(-1);
    const chain = last?.writes.find((w) => w.alert.type === 'chain.account_takeover');
    expect(chain?.alert.details).toMatchObject({
      window_minutes: 60,
      stages: [
        // The success after the brute force is itself a credential attack that worked: the chain's
        // first stage moves to it (a stage keeps its latest sighting).
        { stage: 'credential_attack_or_risky_login', event_id: 'evt_10', event_type: 'auth.login.success', alerts: ['auth.credential_stuffing_success'] },
        { stage: 'login_success', event_id: 'evt_10', event_type: 'auth.login.success', alerts: [] },
        { stage: 'sensitive_change', event_id: 'evt_11', event_type: 'auth.mfa.disabled', alerts: [] },
      ],
    });
    expect(chain?.alert.severity).toBe('critical');
    expect(last?.alerts.map((a) => a.type).sort()).toEqual(['auth.mfa_disabled', 'chain.account_takeover']);
  });

  it('keeps deduplication across detect stages sharing one state store (as instances sharing Redis would)', async () => {
    const state = new MemoryStateStore({ sweepIntervalMs: 0 });
    const a = createDetectStage({ state });
    const b = createDetectStage({ state });
    const ctx = accountContext();
    const events = failures(12).map((s) => enriched(s));
    const hits = [];
    for (const [i, e] of events.entries()) hits.push(...(await (i % 2 === 0 ? a : b)(e, ctx, `evt_${i}`)).alerts);
    expect(hits.filter((h) => h.opened)).toHaveLength(1);
    expect(new Set(hits.map((h) => h.id)).size).toBe(1);
  });

  it('keeps accounts apart', async () => {
    const state = new MemoryStateStore({ sweepIntervalMs: 0 });
    const detect = createDetectStage({ state });
    let hits = 0;
    for (const [i, spec] of failures(10).entries()) hits += (await detect(enriched(spec), accountContext({}, i % 2 === 0 ? 'acc_a' : 'acc_b'))).alerts.length;
    expect(hits).toBe(0);
  });

  it('silences detectors through actor, ASN and country allowlists, and disabled detectors', async () => {
    const travel = (extra: Partial<EventSpec>): EventSpec[] => [
      { type: 'auth.login.success', actor: 'alice', ip: '203.0.113.10', geo: { country: 'FR', lat: 48.85, lon: 2.35, radius: 10 }, ...extra },
      {
        type: 'auth.login.success',
        actor: 'alice',
        ip: '198.51.100.10',
        at: 1_800_000,
        geo: { country: 'US', lat: 40.71, lon: -74, radius: 10 },
        asn: 64500,
        ...extra,
      },
    ];
    const fired = async (settings: Record<string, unknown>) => (await playAll(travel({}), settings)).flatMap((r) => r.alerts.map((a) => a.type));
    expect(await fired({})).toEqual(['auth.impossible_travel']);
    expect(await fired({ allowlists: { actors: [{ value: 'alice', detectors: ['impossible_travel'] }] } })).toEqual([]);
    expect(await fired({ allowlists: { asns: [{ value: 64500, detectors: ['*'] }] } })).toEqual([]);
    expect(await fired({ allowlists: { countries: [{ value: 'us', detectors: ['impossible_travel'] }] } })).toEqual([]);
    expect(await fired({ allowlists: { countries: [{ value: 'US', detectors: ['brute_force'] }] } })).toEqual(['auth.impossible_travel']);
    expect(await fired({ detectors: { impossible_travel: { enabled: false } } })).toEqual([]);
  });

  it('gives the same alerts when a batch is replayed later (event time, not wall time)', async () => {
    const specs = [...failures(10), { type: 'auth.login.success', actor: 'alice', ip: '198.51.100.66', at: 180_000 }];
    const live = (await playAll(specs)).flatMap((r) => r.alerts.map((a) => `${a.type}|${a.subject}|${a.opened}`));
    const state = new MemoryStateStore({ sweepIntervalMs: 0, clock: new ManualClock(Date.UTC(2027, 5, 1)) });
    const replay = (await playAll(specs, {}, state)).flatMap((r) => r.alerts.map((a) => `${a.type}|${a.subject}|${a.opened}`));
    expect(replay).toEqual(live);
    expect(live.length).toBeGreaterThan(0);
  });
});

describe('forgetAlert', () => {
  it('makes the next sighting open a new alert', async () => {
    const { forgetAlert } = await import('../../src/detection/engine.js');
    const state = new MemoryStateStore({ sweepIntervalMs: 0 });
    const detect = createDetectStage({ state });
    const ctx = accountContext();
    const events = failures(12).map((s) => enriched(s));
    const opened: string[] = [];
    for (const [i, e] of events.entries()) {
      if (i === 11) await forgetAlert(state, 'acc_test', 'auth.brute_force.account', 'actor:alice', e.occurredAt);
      for (const a of (await detect(e, ctx)).alerts) if (a.opened) opened.push(a.id);
    }
    expect(opened).toHaveLength(2);
  });
});
