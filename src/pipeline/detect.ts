import type { StateStore } from '../detection/state/state-store.js';
import { detectEvent, type DetectionResult } from '../detection/engine.js';
import { detectPipelined, type BatchItem } from '../detection/pipelined-batch.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { AccountContext } from '../event/account.js';
import type { DetectedEvent, EnrichedEvent } from '../event/types.js';
import type { AlertWrite } from '../storage/types.js';
import type { Detected, LookedUp } from './request.js';
import type { Stage } from './stage.js';

/** What detection found for one event: its alerts, and the alert rows to commit with it. */
export type Detection = DetectionResult;

/**
 * The built-in detectors over events. `eventId` is the id the event will be stored under
 * (newId('evt')): it is recorded in AlertRow.eventIds and in kill-chain stage links. Omit it only
 * where no event is stored. Rejects only when the state backend is unavailable (StateUnavailableError).
 */
export interface DetectStage {
  (event: EnrichedEvent, ctx: AccountContext, eventId?: string): Promise<Detection>;
  /**
   * The accepted events of one request, in order, with the results of detecting them one after
   * the other. A remote state store gets them pipelined (see detection/pipelined-batch.ts).
   */
  many(events: readonly BatchItem[], ctx: AccountContext): Promise<Detection[]>;
}

export interface DetectDeps {
  /** Window state shared by the detectors: MemoryStateStore embedded, Redis when scaled out. */
  readonly state: StateStore;
  /** Used for alert ids only; detection itself runs on event time. */
  readonly clock?: Clock;
}

/** Runs the detectors named in `event.classification.detectors`. */
export function createDetectStage(deps: DetectDeps): DetectStage {
  const clock = deps.clock ?? systemClock;
  const { state } = deps;
  const one = (event: EnrichedEvent, ctx: AccountContext, eventId?: string) => detectEvent(state, clock, event, ctx, eventId);
  async function many(events: readonly BatchItem[], ctx: AccountContext): Promise<Detection[]> {
    if (events.length > 1 && !state.runSync) return detectPipelined(state, clock, events, ctx);
    // The in-process store answers synchronously: one after the other costs no round trips.
    const out: Detection[] = [];
    for (const { event, eventId } of events) out.push(await one(event, ctx, eventId));
    return out;
  }
  return Object.assign(one, { many });
}

/** Detects over the admitted events as one batch; each event gets its alerts, and its alert rows wait for the commit. */
export function detectStage(detect: DetectStage): Stage<LookedUp, Detected> {
  return async (request) => {
    const { enriched, ids, account } = request;
    const items: BatchItem[] = [];
    for (let n = 0; n < enriched.length; n++) items.push({ event: enriched[n] as EnrichedEvent, eventId: ids[n] as string });
    const detections = items.length === 0 ? [] : await detect.many(items, account);
    const detected: DetectedEvent[] = [];
    const detectorWrites: (readonly AlertWrite[])[] = [];
    for (let n = 0; n < items.length; n++) {
      const { event } = items[n] as BatchItem;
      const detection = detections[n] as Detection;
      detected.push(
        Object.assign(event, detection.standing === undefined ? { alerts: detection.alerts } : { alerts: detection.alerts, standing: detection.standing }),
      );
      detectorWrites.push(detection.writes);
    }
    return Object.assign(request, { detected, detectorWrites });
  };
}
