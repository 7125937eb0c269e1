import type { FastifyServerOptions } from 'fastify';
import type { AppDeps } from './app.js';
import { buildCatalog } from './catalog/catalog.js';
import type { Config } from './config/config.js';
import { MemoryQuotaCounter } from './limits/memory-quota.js';
import { MemoryRateLimiter } from './limits/memory-limiter.js';
import { createDetectStage } from './pipeline/detect.js';
import { createEnrichStage } from './pipeline/enrich.js';
import { createScoreStage } from './pipeline/score.js';
import { openSqliteStore } from './storage/sqlite.js';
import type { Store } from './storage/store.js';
import { systemClock, type Clock } from './util/clock.js';

export interface Services extends AppDeps {
  /** Closes what the services opened (after the app has drained). */
  shutdown(): Promise<void>;
}

export async function openStore(config: Config): Promise<Store> {
  if (config.databaseUrl) throw new Error('VIGIL_DATABASE_URL: PostgreSQL support is not built into this version yet');
  return openSqliteStore({ dataDir: config.dataDir, synchronous: config.sqliteSynchronous });
}

/**
 * Builds the backends named by the configuration: SQLite and in-memory state by default;
 * PostgreSQL and Redis when their URLs are set.
 */
export async function createServices(config: Config, options: { clock?: Clock; logger?: FastifyServerOptions['logger']; store?: Store } = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? (await openStore(config));
  await store.migrate();
  const limiter = new MemoryRateLimiter();
  const quota = new MemoryQuotaCounter((accountId, period) => store.getUsage(accountId, period));
  const catalog = buildCatalog({ detectors: [], alertTypes: [], killChains: [] });
  return {
    config,
    store,
    limiter,
    quota,
    catalog,
    enrich: createEnrichStage(),
    detect: createDetectStage(),
    score: createScoreStage(),
    clock,
    logger: options.logger,
    async shutdown() {
      await limiter.close();
      await quota.close();
      await store.close();
    },
  };
}
