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
import { openPostgresStore } from './storage/postgres.js';
import { RedisQuotaCounter } from './limits/redis-quota.js';
import { RedisRateLimiter } from './limits/redis-limiter.js';
import { Redis } from 'ioredis';
import type { Store } from './storage/store.js';
import { systemClock, type Clock } from './util/clock.js';

export interface Services extends AppDeps {
  /** Closes what the services opened (after the app has drained). */
  shutdown(): Promise<void>;
}

export async function openStore(config: Config): Promise<Store> {
  if (config.databaseUrl) return openPostgresStore(config.databaseUrl);
  return openSqliteStore({ dataDir: config.dataDir, synchronous: config.sqliteSynchronous });
}

/** Redis client for the scale-out mode: fail fast while disconnected (no offline queue), reconnect forever. */
export function openRedis(url: string): Redis {
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, retryStrategy: (attempt) => Math.min(attempt * 200, 2_000) });
}

/**
 * Builds the backends named by the configuration: SQLite and in-memory state by default;
 * PostgreSQL and Redis when their URLs are set.
 */
export async function createServices(config: Config, options: { clock?: Clock; logger?: FastifyServerOptions['logger']; store?: Store } = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? (await openStore(config));
  await store.migrate();
  const seed = (accountId: string, period: string) => store.getUsage(accountId, period);
  const redis = config.redisUrl ? openRedis(config.redisUrl) : undefined;
  const limiter = redis ? new RedisRateLimiter(redis) : new MemoryRateLimiter();
  const quota = redis ? new RedisQuotaCounter(redis, seed, { clock }) : new MemoryQuotaCounter(seed);
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
      redis?.disconnect();
    },
  };
}
