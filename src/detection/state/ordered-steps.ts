import type { SequenceStep, StateValue } from './state-store.js';

/** One stage's sightings, oldest first. */
export type Sightings = { at: number; ref: StateValue }[];

/**
 * The chain through stage `stage` at `at`: for the stages before it the latest sighting at or
 * before the next one's time, for those after it the earliest at or after the previous one's, so
 * the chain found spans the least time of any through this sighting. Null when a stage has no
 * such sighting or the chain spans `windowMs` or more. The Lua script runs the same search.
 */
export function chainThrough(
  lists: readonly (Sightings | undefined)[],
  stageCount: number,
  stage: number,
  at: number,
  ref: StateValue,
  windowMs: number,
): SequenceStep[] | null {
  const steps: SequenceStep[] = new Array<SequenceStep>(stageCount);
  steps[stage] = { stage, at, ref };
  let bound = at;
  for (let k = stage - 1; k >= 0; k--) {
    const list = lists[k] ?? [];
    let pick = -1;
    for (let i = list.length - 1; i >= 0; i--)
      if ((list[i] as Sightings[number]).at <= bound) {
        pick = i;
        break;
      }
    if (pick === -1) return null;
    const s = list[pick] as Sightings[number];
    steps[k] = { stage: k, at: s.at, ref: s.ref };
    bound = s.at;
  }
  const first = bound;
  bound = at;
  for (let k = stage + 1; k < stageCount; k++) {
    const list = lists[k] ?? [];
    const s = list.find((x) => x.at >= bound);
    if (s === undefined) return null;
    steps[k] = { stage: k, at: s.at, ref: s.ref };
    bound = s.at;
  }
  return bound - first < windowMs ? steps : null;
}
