import type { AccountContext } from '../event/account.js';
import type { StateStore } from '../detection/state/state-store.js';
import type { EnrichedEvent } from '../event/types.js';
import type { Clock } from '../util/clock.js';
import type { CompiledModel } from './compile.js';
import type { ModelCostWatch } from './cost-watch.js';
import { evaluateModels, type ModelDetection } from './evaluate.js';
import { EventView } from './event-view.js';
import type { ModelsInForce, ThreatModelRegistry } from './registry.js';

/**
 * Evaluates an account's custom models after the built-in detectors, in the same request: the
 * pipeline's lookUp and model stages (src/pipeline/model.ts) run it.
 */
export interface ThreatModelStage {
  /**
   * The account's models in force, looked up before the built-in detectors run, under the stamp
   * the request read at authentication; undefined when the plan has none.
   */
  lookup(ctx: AccountContext): ModelsInForce | undefined;
  /**
   * The models over the request's events, each with the id it is stored under. Undefined
   * (synchronously) when no model is in force: the common case costs no promise.
   */
  run(
    models: readonly CompiledModel[],
    events: readonly EnrichedEvent[],
    eventIds: readonly (string | undefined)[],
    ctx: AccountContext,
  ): Promise<readonly ModelDetection[]> | undefined;
}

export function createThreatModelStage(deps: {
  state: StateStore;
  clock: Clock;
  registry: ThreatModelRegistry;
  /** Measures each account's models and suspends the heaviest of an account over budget. */
  costs?: ModelCostWatch;
}): ThreatModelStage {
  const watch = deps.costs;
  return {
    lookup(ctx) {
      return ctx.plan.capabilities.threatModels ? deps.registry.inForce(ctx.account.id, ctx.stamps) : undefined;
    },
    run(models, events, eventIds, ctx) {
      if (models.length === 0) return undefined;
      const accountId = ctx.account.id;
      const window = watch?.costsOf(accountId, models);
      const detections = evaluateModels(
        deps.state,
        deps.clock,
        accountId,
        models,
        events.map((event, n) => {
          const eventId = eventIds[n];
          return eventId === undefined ? { view: EventView.ofEvent(event) } : { view: EventView.ofEvent(event), eventId };
        }),
        window,
      );
      if (window === undefined || watch === undefined) return detections;
      // Reviewed once every event has been measured (a long request's evaluation yields between slices).
      return detections.then((found) => {
        watch.reviewFailures(accountId, models);
        watch.review(accountId, window, models);
        return found;
      });
    },
  };
}
