/**
 * The per-event work budget of threat-model evaluation and the suspension policy, on the
 * evaluator and the cost watch directly: what runs is asserted through the meter and the
 * counters, never through time.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { EVALUATION_BUDGET, SUSPENSION_POLICY, WorkMeter } from '../../src/threat-models/budget.js';
import { compileModel, type CompiledModel } from '../../src/threat-models/compile.js';
import { ModelCostWatch, type Suspension } from '../../src/threat-models/cost-watch.js';
import { evaluateModels, type EvaluationCosts } from '../../src/threat-models/evaluate.js';
import { EventView } from '../../src/threat-models/event-view.js';
import { validateModel } from '../../src/threat-models/validate.js';
import { ManualClock } from '../../src/util/clock.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const HEAVY_REGEX = '(?s)a.{0,998}[0-9]';

function model(id: string, body: Record<string, unknown>): CompiledModel {
  const checked = validateModel(body);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return compileModel(id, 1, checked.value);
}

const heavy = () =>
  model('tm_heavy', {
    name: 'Heavy',
    match: { event: 'custom.*', where: { field: 'metadata.x', op: 'regex', value: HEAVY_REGEX } },
    outcome: { alert: 'custom.heavy', severity: 'low' },
  });
const light = () =>
  model('tm_light', {
    name: 'Light',
    match: { event: 'custom.*', where: { field: 'metadata.user', op: 'equals', value: 'root' } },
    outcome: { alert: 'custom.light', severity: 'low' },
  });

const view = (metadata: Record<string, unknown>, type = 'custom.probe') => new EventView(type, T0, { event: type, metadata });
const fifteenKb = () => `a${'z'.repeat(15 * 1024)}`;

describe('the per-event work budget', () => {
  it('does not run a regex whose worst case is over the budget: the event is exhausted and matches nothing, a small event of the same account still matches', async () => {
    const state = new MemoryStateStore();
    const models = [heavy(), light()];
    const big = view({ x: fifteenKb(), user: 'root' });
    const small = view({ x: 'a1', user: 'root' });
    const costs: EvaluationCosts = { events: 0, exhausted: 0, micros: 0 };
    const [onBig, onSmall] = await evaluateModels(state, new ManualClock(T0), 'acc_budget', models, [{ view: big }, { view: small }], costs);

    // The regex asked for 2,000-odd instructions times 15 KB, was refused and never ran: nothing
    // was spent, and the light model after it was not evaluated for this event.
    expect(big.meter.exhausted).toBe(true);
    expect(big.meter.refused).toBe(1);
    expect(big.meter.left).toBe(EVALUATION_BUDGET.eventSteps);
    expect(onBig?.alerts).toEqual([]);
    expect(models[0]?.usage.exhausted).toBe(1);

    expect(small.meter.exhausted).toBe(false);
    expect(small.meter.refused).toBe(0);
    expect(onSmall?.alerts.map((a) => a.type).sort()).toEqual(['custom.heavy', 'custom.light']);
    expect(costs).toMatchObject({ events: 2, exhausted: 1 });
    await state.close();
  });

  it('refuses a test over the event’s remaining budget even when each one alone is under the per-call cap, and skips the models after it', async () => {
    const state = new MemoryStateStore();
    // 100 characters: each model's regex about 200,000 steps, under the per-call cap; four fit in an event's budget, five do not.
    const models = ['0', '1', '2', '3', '4', '5'].map((d) =>
      model(`tm_${d}`, {
        name: `Digit ${d}`,
        match: { event: 'custom.*', where: { field: 'metadata.x', op: 'regex', value: `(?s)a.{0,998}${d}` } },
        outcome: { alert: `custom.digit_${d}`, severity: 'low' },
      }),
    );
    const v = view({ x: `a${'z'.repeat(98)}5` });
    const [detection] = await evaluateModels(state, new ManualClock(T0), 'acc_budget', models, [{ view: v }]);
    expect(v.meter.exhausted).toBe(true);
    expect(v.meter.refused).toBe(1);
    expect(v.meter.left).toBeLessThan(EVALUATION_BUDGET.eventSteps - 4 * 190_000);
    // The fifth model asked for more than was left; the sixth, which would match, was not evaluated.
    expect(models.map((m) => m.usage.exhausted)).toEqual([0, 0, 0, 0, 1, 0]);
    expect(detection?.alerts).toEqual([]);
    await state.close();
  });

  it('shares one budget among the events of a request: a batch never costs more than twice one event', async () => {
    const state = new MemoryStateStore();
    // Each event: four regex tests of about 200,000 steps, most of an event's budget; a request
    // has room for two such events and part of a third, so the rest of a batch of ten is not evaluated.
    const models = ['0', '1', '2', '3'].map((d) =>
      model(`tm_${d}`, {
        name: `Digit ${d}`,
        match: { event: 'custom.*', where: { field: 'metadata.x', op: 'regex', value: `(?s)a.{0,998}${d}` } },
        outcome: { alert: `custom.digit_${d}`, severity: 'low' },
      }),
    );
    const views = Array.from({ length: 10 }, () => view({ x: `a${'z'.repeat(98)}3` }));
    const costs: EvaluationCosts = { events: 0, exhausted: 0, micros: 0 };
    const detections = await evaluateModels(
      state,
      new ManualClock(T0),
      'acc_budget',
      models,
      views.map((v) => ({ view: v })),
      costs,
    );
    const spent = views.reduce((sum, v) => sum + (v.meter.granted - v.meter.left), 0);
    expect(spent).toBeLessThanOrEqual(EVALUATION_BUDGET.requestSteps);
    expect(views.slice(0, 2).map((v) => v.meter.exhausted)).toEqual([false, false]);
    expect(views.slice(2).every((v) => v.meter.exhausted)).toBe(true);
    // Past the third event nothing is left for a whole test: nothing more runs.
    expect(views.slice(3).every((v) => v.meter.left === v.meter.granted && v.meter.granted < 250_000)).toBe(true);
    expect(detections[0]?.alerts.map((a) => a.type)).toEqual(['custom.digit_3']);
    expect(detections[9]?.alerts).toEqual([]);
    // The next request starts with a whole budget again.
    const next = view({ x: `a${'z'.repeat(98)}3` });
    const [again] = await evaluateModels(state, new ManualClock(T0), 'acc_budget', models, [{ view: next }]);
    expect(next.meter.granted).toBe(EVALUATION_BUDGET.eventSteps);
    expect(again?.alerts.map((a) => a.type)).toEqual(['custom.digit_3']);
    expect(costs.exhausted).toBeGreaterThanOrEqual(7);
    await state.close();
  });

  it('does not let a refused test inside a not read as a match', async () => {
    const state = new MemoryStateStore();
    const negated = model('tm_not', {
      name: 'Not',
      match: { event: 'custom.*', where: { not: { field: 'metadata.x', op: 'regex', value: HEAVY_REGEX } } },
      outcome: { alert: 'custom.not', severity: 'low' },
    });
    const [onBig, onSmall] = await evaluateModels(
      state,
      new ManualClock(T0),
      'acc_budget',
      [negated],
      [{ view: view({ x: fifteenKb() }) }, { view: view({ x: 'b' }) }],
    );
    expect(onBig?.alerts).toEqual([]);
    expect(onSmall?.alerts.map((a) => a.type)).toEqual(['custom.not']);
    await state.close();
  });

  it('charges string, wildcard and keyword tests by the length of the text', () => {
    const contains = model('tm_contains', {
      name: 'Contains',
      match: { event: '*', where: { field: '*', op: 'contains', value: 'needle' } },
      outcome: { alert: 'custom.contains', severity: 'low' },
    });
    const v = view({ a: 'x'.repeat(1000), b: ['y'.repeat(500)] });
    expect(contains.steps[0]?.where?.(v)).toBe(false);
    // Every string the sender gave: the type, then each metadata value; each its length + the needle's + 1.
    expect(v.meter.asked).toBe('custom.probe'.length + 7 + (1000 + 7) + (500 + 7));

    const meter = new WorkMeter(10, 15);
    expect(meter.charge(10)).toBe(true);
    expect(meter.charge(6)).toBe(false);
    expect(meter.exhausted).toBe(true);
    expect(meter.charge(1)).toBe(false);
    meter.reset();
    expect(meter.charge(11)).toBe(false);
  });
});

describe('suspension of the heaviest model', () => {
  function watch(policy: Partial<typeof SUSPENSION_POLICY> = {}) {
    const suspended: string[] = [];
    const stored: Suspension[] = [];
    let now = 0;
    const w = new ModelCostWatch({
      store: { suspendThreatModel: async () => true },
      registry: { suspend: (_a, id) => void suspended.push(id), resume: () => undefined, changed: async () => undefined },
      clock: new ManualClock(T0),
      now: () => now,
      policy,
    });
    w.onSuspended((s) => {
      stored.push(s);
    });
    return { w, suspended, stored, advance: (ms: number) => (now += ms) };
  }

  /** One request of `events` events in which each model took `micros` per event. */
  function request(w: ModelCostWatch, models: readonly CompiledModel[], events: number, micros: readonly number[], exhausted = 0) {
    const window = w.costsOf('acc', models);
    models.forEach((m, i) => {
      m.usage.micros += (micros[i] ?? 0) * events;
      window.micros += (micros[i] ?? 0) * events;
    });
    window.events += events;
    window.exhausted += exhausted;
    if (exhausted > 0) (models[0] as CompiledModel).usage.exhausted += exhausted;
    w.review('acc', window, models);
  }

  it('suspends the model with the largest share once the account is over budget over enough events and requests', async () => {
    const { w, suspended, stored } = watch();
    const models = [light(), heavy()];
    // One request of a hundred costly events is a burst, not a sustained cost.
    request(w, models, 100, [10, 5_000]);
    expect(suspended).toEqual([]);
    for (let i = 0; i < 8; i++) request(w, models, 1, [10, 5_000]);
    expect(suspended).toEqual([]);
    request(w, models, 1, [10, 5_000]);
    expect(suspended).toEqual(['tm_heavy']);
    await w.settled();
    expect(stored).toHaveLength(1);
    expect(stored[0]?.reason).toMatch(
      /^Suspended at 2026-01-15T12:00:00Z: the account's threat models took 5,010 µs per event on average over 109 events, over the budget of 1,000 µs/,
    );
    expect(stored[0]?.reason).toMatch(/re-enable it/);
  });

  it('starts over after a suspension and suspends the next heaviest only if the account is still over budget', () => {
    const { w, suspended } = watch({ minEvents: 5, minRequests: 5 });
    const a = heavy();
    const b = light();
    for (let i = 0; i < 5; i++) request(w, [a, b], 1, [3_000, 2_000]);
    expect(suspended).toEqual(['tm_heavy']);
    for (let i = 0; i < 4; i++) request(w, [b], 1, [2_000]);
    expect(suspended).toEqual(['tm_heavy']);
    request(w, [b], 1, [2_000]);
    expect(suspended).toEqual(['tm_heavy', 'tm_light']);
  });

  it('counts events that ran out of the work budget as evidence, but not one alone, and forgets evidence older than the window', () => {
    const { w, suspended, advance } = watch();
    const models = [heavy(), light()];
    // One hostile event among ordinary traffic: the account stays under budget.
    request(w, models, 1, [1, 1], 1);
    for (let i = 0; i < 60; i++) request(w, models, 1, [5, 5]);
    expect(suspended).toEqual([]);
    // Many, but spread over more than the window: each window starts with too little evidence.
    for (let i = 0; i < 60; i++) {
      advance(SUSPENSION_POLICY.windowMs + 1);
      request(w, models, 1, [1, 1], 1);
    }
    expect(suspended).toEqual([]);
    // Sustained: more than one event in ten running out, over enough requests within a minute.
    for (let i = 0; i < 50; i++) request(w, models, 1, [1, 1], i % 5 === 0 ? 1 : 0);
    expect(suspended).toEqual(['tm_heavy']);
  });
});
