/**
 * Scenario runner in the style of CrowdSec's bucket tests: each file under
 * test/fixtures/detectors/<detector>/<scenario>.yaml holds the input events and the alerts they
 * must (and must not) raise. One fresh state store per scenario.
 *
 *   description: what the scenario shows
 *   settings:    account settings (detectors, allowlists), optional
 *   defaults:    fields merged into every event, optional
 *   order:       `time` (default: events are delivered sorted by time, stable) or `listed`
 *                (delivered as written: delayed and out-of-order delivery)
 *   events:      EventSpec list (see helpers.ts); `repeat: n` + `every: 10s` expand one line
 *                into n events, `{i}` in any string becomes the repetition index (`{i%4}`,
 *                `{i/5}`: remainder and whole quotient)
 *   expect:
 *     alerts:    exact set of alert types opened by the scenario
 *     absent:    alert types that must not be raised at all (quiet cases)
 *     opened:    { type: n } number of distinct alerts opened of that type (deduplication)
 *     count:     { type: n } count reached by the last alert of that type
 */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { ALERT_TYPES } from '../../src/detection/specs.js';
import { createDetectStage } from '../../src/pipeline/detect.js';
import type { AlertWrite } from '../../src/storage/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { expand, loadScenarios, type Scenario } from './fixtures.js';
import { accountContext, enriched } from './helpers.js';

async function play(scenario: Scenario): Promise<AlertWrite[]> {
  const state = new MemoryStateStore({ sweepIntervalMs: 0 });
  const detect = createDetectStage({ state, clock: new ManualClock() });
  const ctx = accountContext(scenario.settings ?? {});
  const writes: AlertWrite[] = [];
  let n = 0;
  for (const spec of expand(scenario)) {
    const result = await detect(enriched(spec), ctx, `evt_${n++}`);
    expect(result.alerts.map((a) => a.id)).toEqual(result.writes.map((w) => w.alert.id));
    writes.push(...result.writes);
  }
  await state.close();
  return writes;
}

const scenarios = loadScenarios();

describe('detector scenarios', () => {
  it.each(scenarios)('$name', async ({ scenario }) => {
    const writes = await play(scenario);
    const opened = writes.filter((w) => w.opened).map((w) => w.alert.type);
    expect([...new Set(opened)].sort(), scenario.description).toEqual([...new Set(scenario.expect.alerts)].sort());
    const raised = new Set(writes.map((w) => w.alert.type));
    for (const type of scenario.expect.absent ?? []) expect(raised.has(type), `${type} must stay quiet: ${scenario.description}`).toBe(false);
    for (const [type, n] of Object.entries(scenario.expect.opened ?? {})) expect(opened.filter((t) => t === type).length, `${type} opened`).toBe(n);
    for (const [type, n] of Object.entries(scenario.expect.count ?? {}))
      expect(writes.filter((w) => w.alert.type === type).at(-1)?.alert.count, `${type} count`).toBe(n);
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
