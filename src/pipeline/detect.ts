import type { AlertWrite } from '../storage/types.js';
import type { AlertHit } from '../detection/types.js';
import type { StateStore } from '../detection/state-store.js';
import { detectEvent } from '../detection/engine.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { AccountContext } from './account-context.js';
import type { EnrichedEvent } from './types.js';

export interface Detection {
  /** Alerts this event raised or updated, for the response and the score. */
  readonly alerts: readonly AlertHit[];
  /** Alert rows to write in the same commit as the event. */
  readonly writes: readonly AlertWrite[];
}

/**
 * `eventId` is the id the event will be stored under (newId('evt')): it is recorded in
 * AlertRow.eventIds and in kill-chain stage links. Omit it only where no event is stored.
 * Rejects only when the state backend is unavailable (StateUnavailableError).
 */
export type DetectStage = (event: EnrichedEvent, ctx: AccountContext, eventId?: string) => Promise<Detection>;

export interface DetectDeps {
  /** Window state shared by the detectors: MemoryStateStore embedded, Redis when scaled out. */
  readonly state: StateStore;
  /** Used for alert ids only; detection itself runs on event time. */
  readonly clock?: Clock;
}

/** Runs the detectors named in `event.classification.detectors` (design 7). */
export function createDetectStage(deps: DetectDeps): DetectStage {
  const clock = deps.clock ?? systemClock;
  return (event, ctx, eventId) => detectEvent(deps.state, clock, event, ctx, eventId);
}
