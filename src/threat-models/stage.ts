import type { AccountContext } from '../event/account.js';
import type { BatchItem } from '../detection/pipelined-batch.js';
import type { StateStore } from '../detection/state/state-store.js';
import type { Plan } from '../event/account.js';
import type { Clock } from '../util/clock.js';
import type { CompiledModel } from './compile.js';
import { evaluateModels, type ModelDetection } from './evaluate.js';
import { EventView } from './event-view.js';
import type { ThreatModelRegistry } from './registry.js';

/** Plans without custom threat models; every other plan (Pro, Business and custom plans) has them. */
const PLANS_WITHOUT_MODELS: ReadonlySet<string> = new Set(['free', 'starter']);

export const planHasThreatModels = (plan: Plan): boolean => !PLANS_WITHOUT_MODELS.has(plan.name);

/** Evaluates an account's custom models after the built-in detectors, in the same request. */
export interface ThreatModelStage {
  /** Undefined (synchronously) when the account has no model in force: the common case costs no promise. */
  run(items: readonly BatchItem[], ctx: AccountContext): Promise<readonly ModelDetection[]> | undefined;
}

export function createThreatModelStage(deps: { state: StateStore; clock: Clock; registry: ThreatModelRegistry }): ThreatModelStage {
  const evaluate = (models: readonly CompiledModel[], items: readonly BatchItem[], ctx: AccountContext) =>
    evaluateModels(
      deps.state,
      deps.clock,
      ctx.account.id,
      models,
      items.map((item) => ({ view: EventView.ofEvent(item.event), ...(item.eventId === undefined ? {} : { eventId: item.eventId }) })),
    );
  return {
    run(items, ctx) {
      if (!planHasThreatModels(ctx.plan)) return undefined;
      const models = deps.registry.current(ctx.account.id);
      if (models !== undefined) return models.length === 0 ? undefined : evaluate(models, items, ctx);
      return deps.registry.load(ctx.account.id).then((loaded) => evaluate(loaded, items, ctx));
    },
  };
}
