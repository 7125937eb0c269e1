/** Detection of a list of events one by one and as one batch (DetectStage.many), for comparing the two. */
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import type { StateStore } from '../../src/detection/state/state-store.js';
import { createDetectStage, type Detection } from '../../src/pipeline/detect.js';
import { ManualClock } from '../../src/util/clock.js';
import { expect } from 'vitest';
import { expand, type Scenario } from './fixtures.js';
import { accountContext, enriched, type EventSpec } from './helpers.js';

const items = (specs: readonly EventSpec[]) => specs.map((spec, n) => ({ event: enriched(spec), eventId: `evt_${n}` }));

export async function oneByOne(state: StateStore, specs: readonly EventSpec[], settings: Record<string, unknown> = {}): Promise<Detection[]> {
  const detect = createDetectStage({ state, clock: new ManualClock() });
  const out: Detection[] = [];
  for (const { event, eventId } of items(specs)) out.push(await detect(event, accountContext(settings), eventId));
  return out;
}

export const asBatch = (state: StateStore, specs: readonly EventSpec[], settings: Record<string, unknown> = {}) =>
  createDetectStage({ state, clock: new ManualClock() }).many(items(specs), accountContext(settings));

/** Alert ids are random: each becomes its order of first appearance. */
export function normalised(detections: readonly Detection[]): string {
  const text = JSON.stringify(detections);
  const ids = [...new Set(text.match(/alr_[A-Za-z0-9_-]+/g) ?? [])];
  return ids.reduce((t, id, n) => t.replaceAll(id, `alert#${n}`), text);
}

export async function sameAsOneByOne(scenario: Scenario, store: () => StateStore): Promise<void> {
  const specs = expand(scenario);
  const expected = normalised(await oneByOne(new MemoryStateStore({ sweepIntervalMs: 0 }), specs, scenario.settings));
  const actual = normalised(await asBatch(store(), specs, scenario.settings));
  expect(actual).toBe(expected);
}
