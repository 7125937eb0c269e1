/**
 * Scenario runner in the style of CrowdSec's bucket tests: each file under
 * test/fixtures/detectors/<detector>/<scenario>.yaml holds the input events and the alerts they
 * must (and must not) raise. One fresh state store per scenario, in both modes: the in-process
 * store, and Redis (the scale-out store) with each scenario's events sent in pipelined batches.
 *
 *   description: what the scenario shows
 *   settings:    account settings (detectors, allowlists), optional
 *   defaults:    fields merged into every event, optional
 *   order:       `time` (default: events are delivered sorted by time, stable) or `listed`
 *                (delivered as written: delayed and out-of-order delivery)
 *   events:      EventSpec list (see helpers.ts); `repeat: n` + `every: 10s` expand one line
 *                into n events, `{i}` in any string becomes the repetition index (`{i%4}`,
 *                `{i/5}`: remainder and whole quotient). A line may also say what its event
 *                must get: `decision: allow|challenge|block` (the risk action with the default
 *                thresholds) and `raises: [types]` (exactly the alerts this event raised or updated)
 *   expect:
 *     alerts:    exact set of alert types opened by the scenario
 *     absent:    alert types that must not be raised at all (quiet cases)
 *     opened:    { type: n } number of distinct alerts opened of that type (deduplication)
 *     count:     { type: n } count reached by the last alert of that type
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import type { StateStore } from '../../src/detection/state/state-store.js';
import { ALERT_TYPES } from '../../src/detection/specs.js';
import type { RiskAction } from '../../src/event/risk.js';
import { createDetectStage } from '../../src/pipeline/detect.js';
import { RedisStateStore } from '../../src/redis/state-store.js';
import { compositeRisk } from '../../src/scoring/composite.js';
import { DEFAULT_THRESHOLDS } from '../../src/scoring/thresholds.js';
import type { AlertWrite } from '../../src/storage/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { expand, loadScenarios, type Scenario } from './fixtures.js';
import { accountContext, enriched } from './helpers.js';

/** Events sent to the shared store per `many` call: several per batch exercise the pipelined path. */
const PIPELINE_BATCH = 8;

interface Decided {
  readonly line: number;
  readonly alerts: readonly string[];
  readonly score: number;
  readonly action: RiskAction;
  readonly expected: { decision?: RiskAction; raises?: readonly string[] };
}

async function play(scenario: Scenario, state: StateStore): Promise<{ writes: AlertWrite[]; decided: Decided[] }> {
  const detect = createDetectStage({ state, clock: new ManualClock() });
  const ctx = accountContext(scenario.settings ?? {}, `acc_${Math.random().toString(36).slice(2, 10)}`);
  const writes: AlertWrite[] = [];
  const decided: Decided[] = [];
  const specs = expand(scenario);
  const step = state.runSync ? 1 : PIPELINE_BATCH;
  for (let from = 0; from < specs.length; from += step) {
    const chunk = specs.slice(from, from + step);
    const events = chunk.map((spec) => enriched(spec));
    const results = await detect.many(
      events.map((event, i) => ({ event, eventId: `evt_${from + i}` })),
      ctx,
    );
    results.forEach((result, i) => {
      const spec = chunk[i] as (typeof chunk)[number];
      expect(result.alerts.map((a) => a.id)).toEqual(result.writes.map((w) => w.alert.id));
      writes.push(...result.writes);
      if (spec.decision === undefined && spec.raises === undefined) return;
      const risk = compositeRisk(
        { ...(events[i] as (typeof events)[number]), alerts: result.alerts, ...(result.standing ? { standing: result.standing } : {}) },
        DEFAULT_THRESHOLDS,
      );
      decided.push({
        line: from + i,
        alerts: result.alerts.map((a) => a.type),
        score: risk.score,
        action: risk.action,
        expected: { ...(spec.decision ? { decision: spec.decision } : {}), ...(spec.raises ? { raises: spec.raises } : {}) },
      });
    });
  }
  return { writes, decided };
}

const scenarios = loadScenarios();

/** Standing alerts and export baselines of one account say nothing about another's actor of the same name. */
async function accountsApart(state: StateStore): Promise<void> {
  const detect = createDetectStage({ state, clock: new ManualClock() });
  const [a, b] = [accountContext({}, `acc_a${Math.random().toString(36).slice(2, 8)}`), accountContext({}, `acc_b${Math.random().toString(36).slice(2, 8)}`)];
  const login = (at: string, country: string, lat: number, lon: number) =>
    enriched({ type: 'auth.login.success', at, actor: 'alice', ip: '203.0.113.80', geo: { country, lat, lon } });
  await detect(login('0s', 'GB', 51.5074, -0.1278), a);
  expect((await detect(login('20m', 'JP', 35.6762, 139.6503), a)).alerts.map((h) => h.type)).toEqual(['auth.impossible_travel']);
  expect((await detect(enriched({ type: 'data.accessed', at: '25m', actor: 'alice' }), a)).standing?.type).toBe('auth.impossible_travel');
  expect((await detect(enriched({ type: 'data.accessed', at: '25m', actor: 'alice' }), b)).standing).toBeUndefined();
  const night = (day: number, ctx: typeof a) => detect(enriched({ type: 'data.exported', at: `${day}d2h`, actor: 'svc-etl', metadata: { rows: 50_000 } }), ctx);
  for (let day = 0; day < 7; day++) await night(day, a);
  expect((await night(7, a)).alerts.map((h) => h.type)).toEqual(['data.bulk_export']);
  expect((await night(7, b)).alerts.map((h) => h.type)).toEqual(['data.bulk_export', 'data.exfiltration_volume']);
}
const decisionRows: string[] = [];

function check(name: string, scenario: Scenario, writes: readonly AlertWrite[], decided: readonly Decided[]): void {
  for (const d of decided) decisionRows.push(`| ${name} | ${d.line} | ${d.alerts.join(', ') || '—'} | ${d.score} | ${d.action} |`);
  const opened = writes.filter((w) => w.opened).map((w) => w.alert.type);
  expect([...new Set(opened)].sort(), scenario.description).toEqual([...new Set(scenario.expect.alerts)].sort());
  const raised = new Set(writes.map((w) => w.alert.type));
  for (const type of scenario.expect.absent ?? []) expect(raised.has(type), `${type} must stay quiet: ${scenario.description}`).toBe(false);
  for (const [type, n] of Object.entries(scenario.expect.opened ?? {})) expect(opened.filter((t) => t === type).length, `${type} opened`).toBe(n);
  for (const [type, n] of Object.entries(scenario.expect.count ?? {}))
    expect(writes.filter((w) => w.alert.type === type).at(-1)?.alert.count, `${type} count`).toBe(n);
  for (const d of decided) {
    if (d.expected.raises !== undefined) expect([...d.alerts].sort(), `alerts of event ${d.line}`).toEqual([...d.expected.raises].sort());
    if (d.expected.decision !== undefined)
      expect(d.action, `decision on event ${d.line} (score ${d.score}, alerts ${d.alerts.join(', ')})`).toBe(d.expected.decision);
  }
}

describe('detector scenarios (in-process state)', () => {
  afterAll(() => {
    if (decisionRows.length > 0) console.log(['| scenario | event | alerts | score | action |', '|---|---|---|---|---|', ...decisionRows].join('\n'));
  });

  it.each(scenarios)('$name', async ({ name, scenario }) => {
    const state = new MemoryStateStore({ sweepIntervalMs: 0 });
    const { writes, decided } = await play(scenario, state);
    await state.close();
    check(name, scenario, writes, decided);
  });

  it('keeps accounts apart', async () => {
    const state = new MemoryStateStore({ sweepIntervalMs: 0 });
    await accountsApart(state);
    await state.close();
  });

  it('fires every alert type in some scenario and keeps each quiet in another', () => {
    const fired = new Set(scenarios.flatMap((s) => s.scenario.expect.alerts));
    const quiet = new Set(scenarios.flatMap((s) => s.scenario.expect.absent ?? []));
    const known = ALERT_TYPES.map((a) => a.type);
    expect(
      known.filter((t) => !fired.has(t)),
      'never fired',
    ).toEqual([]);
    expect(
      known.filter((t) => !quiet.has(t)),
      'never shown quiet',
    ).toEqual([]);
    for (const t of [...fired, ...quiet]) expect(known, 'fixture names an unknown alert type').toContain(t);
  });
});

const redis = await connectTestRedis('detector-scenarios');

describeWithRedis('detector scenarios (Redis state, pipelined batches)', redis, (r) => {
  it.each(scenarios)('$name', async ({ name, scenario }) => {
    const state = new RedisStateStore(r.client, { prefix: `${r.prefix}${name}:` });
    const { writes, decided } = await play(scenario, state);
    check(name, scenario, writes, decided);
  });

  it('keeps accounts apart', () => accountsApart(new RedisStateStore(r.client, { prefix: `${r.prefix}apart:` })));
});
