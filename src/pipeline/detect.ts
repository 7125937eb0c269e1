import type { StateStore } from '../detection/state/state-store.js';
import { detectEvent, type DetectionResult } from '../detection/engine.js';
import { detectPipelined, type BatchItem } from '../detection/pipelined-batch.js';
import type { ModelsInForce } from '../threat-models/registry.js';
import type { ThreatModelStage } from '../threat-models/stage.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { AccountContext } from '../event/account.js';
import type { EnrichedEvent } from '../event/types.js';

/** What detection found for one event: its alerts, and the alert rows to commit with it. */
export type Detection = DetectionResult;

/**
 * `eventId` is the id the event will be stored under (newId('evt')): it is recorded in
 * AlertRow.eventIds and in kill-chain stage links. Omit it only where no event is stored.
 * Rejects only when the state backend is unavailable (StateUnavailableError).
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
  /** The account's custom threat models, evaluated after the built-in detectors on the same state. */
  readonly threatModels?: ThreatModelStage;
}

/** Appends the custom models' alerts and alert writes to the built-in detectors' results. */
async function withThreatModels(
  stage: ThreatModelStage | undefined,
  lookup: ModelsInForce | undefined,
  events: readonly BatchItem[],
  ctx: AccountContext,
  built: readonly Detection[],
): Promise<Detection[]> {
  if (stage === undefined || lookup === undefined) return built as Detection[];
  const custom = stage.run(lookup instanceof Promise ? await lookup : lookup, events, ctx);
  if (custom === undefined) return built as Detection[];
  const extra = await custom;
  return built.map((d, i) => {
    const more = extra[i];
    return more === undefined || more.alerts.length === 0
      ? d
      : Object.assign({}, d, { alerts: [...d.alerts, ...more.alerts], writes: [...d.writes, ...more.writes] });
  });
}

/** Starts the models' lookup; when built-in detection fails first, its rejection is not left unobserved. */
function lookUpModels(stage: ThreatModelStage | undefined, ctx: AccountContext): ModelsInForce | undefined {
  const lookup = stage?.lookup(ctx);
  if (lookup instanceof Promise) lookup.catch(() => undefined);
  return lookup;
}

/** Runs the detectors named in `event.classification.detectors`. */
export function createDetectStage(deps: DetectDeps): DetectStage {
  const clock = deps.clock ?? systemClock;
  const { state } = deps;
  const builtIn = (event: EnrichedEvent, ctx: AccountContext, eventId?: string) => detectEvent(state, clock, event, ctx, eventId);
  const one = async (event: EnrichedEvent, ctx: AccountContext, eventId?: string): Promise<Detection> => {
    const lookup = lookUpModels(deps.threatModels, ctx);
    const detection = await builtIn(event, ctx, eventId);
    if (lookup === undefined) return detection;
    return (await withThreatModels(deps.threatModels, lookup, [eventId === undefined ? { event } : { event, eventId }], ctx, [detection]))[0] as Detection;
  };
  async function many(events: readonly BatchItem[], ctx: AccountContext): Promise<Detection[]> {
    const lookup = lookUpModels(deps.threatModels, ctx);
    let out: Detection[];
    if (events.length > 1 && !state.runSync) out = await detectPipelined(state, clock, events, ctx);
    else {
      // The in-process store answers synchronously: one after the other costs no round trips.
      out = [];
      for (const { event, eventId } of events) out.push(await builtIn(event, ctx, eventId));
    }
    return withThreatModels(deps.threatModels, lookup, events, ctx, out);
  }
  return Object.assign(one, { many });
}
