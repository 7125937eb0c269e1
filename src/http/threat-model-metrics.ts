import { Counter, Gauge, type Registry } from 'prom-client';
import type { ModelCostWatch } from '../threat-models/cost-watch.js';
import type { ThreatModelRegistry } from '../threat-models/registry.js';

/**
 * The threat models' share of the process: the estimated heap of the compiled models kept (in
 * total and the largest account's part, without a label per account, which would grow with the
 * accounts), and the models suspended for their evaluation cost.
 */
export function registerThreatModelMetrics(registry: Registry, models: ThreatModelRegistry, costs: ModelCostWatch | undefined): void {
  registry.registerMetric(
    new Gauge({
      name: 'vigil_threat_model_compiled_bytes',
      help: 'Estimated heap of the compiled threat models this instance keeps, every account together',
      registers: [],
      collect() {
        this.set(models.memory().totalBytes);
      },
    }),
  );
  registry.registerMetric(
    new Gauge({
      name: 'vigil_threat_model_compiled_bytes_largest_account',
      help: 'Estimated heap of the compiled threat models of the account keeping most',
      registers: [],
      collect() {
        this.set(models.memory().largestAccountBytes);
      },
    }),
  );
  const suspensions = new Counter({
    name: 'vigil_threat_model_suspensions_total',
    help: 'Threat models suspended by this instance because their evaluation stayed over the per-event budget',
    registers: [registry],
  });
  costs?.onSuspended(() => suspensions.inc());
}
