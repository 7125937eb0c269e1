import { Counter, Gauge, type Registry } from 'prom-client';
import type { StateStoreUsage } from '../detection/state/state-store.js';

/**
 * The in-process detection state (embedded mode, or Redis's stand-in while Redis is unreachable):
 * its estimated heap against the byte budget it is held to, and the records evicted to stay
 * within it. Evictions that climb steadily mean actors' detection state is forgotten before its
 * windows end: give the process a larger heap, or use Redis.
 */
export function registerStateStoreMetrics(registry: Registry, usage: () => StateStoreUsage): void {
  registry.registerMetric(
    new Gauge({
      name: 'vigil_state_store_bytes',
      help: 'Estimated heap bytes of the in-process detection state (embedded mode, or while Redis is unreachable)',
      registers: [],
      collect() {
        this.set(usage().bytes);
      },
    }),
  );
  // The store counts its evictions; the counter adds what it counted since the last scrape.
  let reported = 0;
  registry.registerMetric(
    new Counter({
      name: 'vigil_state_store_evictions_total',
      help: 'Detection state records evicted, least recently written first, to keep the in-process state within its byte budget',
      registers: [],
      collect() {
        const evictions = usage().evictions;
        if (evictions > reported) this.inc(evictions - reported);
        reported = evictions;
      },
    }),
  );
}
