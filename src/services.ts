import type { FastifyBaseLogger } from 'fastify';
import type { AppDeps } from './app.js';
import { buildCatalog } from './catalog/catalog.js';
import type { Config } from './config/config.js';
import { MemoryQuotaCounter } from './limits/memory-quota.js';
import { MemoryRateLimiter } from './limits/memory-limiter.js';
import { createDetectStage } from './pipeline/detect.js';
import { createEnrichment, type EnrichmentService } from './enrichment/index.js';
import type { EnrichmentLogger } from './enrichment/logger.js';
import { ALERT_TYPES, DETECTOR_SPECS, KILL_CHAINS } from './detection/specs.js';
import { MemoryStateStore } from './detection/memory-state-store.js';
import { forgetAlert } from './detection/engine.js';
import type { StateStore } from './detection/state-store.js';
import { RedisStateStore } from './detection/redis-state-store.js';
import { createScoreStage } from './pipeline/score.js';
import { openSqliteStore } from './storage/sqlite.js';
import { RedisQuotaCounter } from './limits/redis-quota.js';
import { FallbackQuotaCounter } from './limits/fallback.js';
import { RedisRateLimiter } from './limits/redis-limiter.js';
import type { Cluster, Redis } from 'ioredis';
import type { Store } from './storage/store.js';
import { systemClock, type Clock } from './util/clock.js';
import { BackendHealth, withFailover } from './util/failover.js';
import type { QuotaCounter, RateLimiter } from './limits/types.js';

const silentLogger: EnrichmentLogger = { warn: () => undefined, info: () => undefined };

export interface Services extends AppDeps {
  readonly enrichment: EnrichmentService;
  /** Present in scale-out mode: whether Redis is reachable from this instance. */
  readonly redisHealth?: BackendHealth;
  /** Closes what the services opened (after the app has drained). */
  shutdown(): Promise<void>;
}

// pg and ioredis are loaded only when configured: together they are a third of the
// embedded mode's module loading at start-up (bench/startup.ts).
export async function openStore(config: Config, log?: FastifyBaseLogger): Promise<Store> {
  if (config.databaseUrl) {
    const { openPostgresStore } = await import('./storage/postgres.js');
    return openPostgresStore(config.databaseUrl, { onConnectionError: (err) => log?.warn({ err }, 'PostgreSQL connection lost; the pool replaces it') });
  }
  return openSqliteStore({ dataDir: config.dataDir, synchronous: config.sqliteSynchronous });
}

/**
 * Redis client for the scale-out mode: fail fast while disconnected (no offline queue), reconnect
 * forever. With `cluster`, `url` is one node of a Redis Cluster (its credentials serve every node);
 * the client discovers the others and follows slot moves.
 */
export async function openRedis(url: string, options: { cluster?: boolean } = {}): Promise<Redis | Cluster> {
  const { Cluster, Redis } = await import('ioredis');
  const backoff = (attempt: number) => Math.min(attempt * 200, 2_000);
  const common = { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 };
  if (!options.cluster) return new Redis(url, { ...common, retryStrategy: backoff });
  const seed = new URL(url);
  return new Cluster([{ host: seed.hostname, port: Number(seed.port || 6379) }], {
    enableOfflineQueue: false,
    clusterRetryStrategy: backoff,
    redisOptions: {
      ...common,
      ...(seed.username ? { username: decodeURIComponent(seed.username) } : {}),
      ...(seed.password ? { password: decodeURIComponent(seed.password) } : {}),
      ...(seed.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}

/**
 * Builds the backends named by the configuration: SQLite and in-memory state by default;
 * PostgreSQL and Redis when their URLs are set.
 */
export async function createServices(
  config: Config,
  options: { clock?: Clock; logger?: FastifyBaseLogger; store?: Store; onBackendChange?: (backend: string, degraded: boolean, reason?: unknown) => void } = {},
): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? (await openStore(config, options.logger));
  await store.migrate();
  const seed = (accountId: string, period: string) => store.getUsage(accountId, period);
  const redis = config.redisUrl ? await openRedis(config.redisUrl, { cluster: config.redisCluster }) : undefined;
  const memoryLimiter = new MemoryRateLimiter();
  const memoryQuota = new MemoryQuotaCounter(seed);
  let limiter: RateLimiter = memoryLimiter;
  let quota: QuotaCounter = memoryQuota;
  const memoryState = new MemoryStateStore({ clock });
  let state: StateStore = memoryState;
  let redisHealth: BackendHealth | undefined;
  if (redis) {
    const health = new BackendHealth('redis', (degraded, reason) => options.onBackendChange?.('redis', degraded, reason));
    redis.on('ready', () => health.markUp());
    redis.on('error', (err) => health.markDown(err));
    redis.on('close', () => health.markDown('connection closed'));
    limiter = withFailover<RateLimiter>(new RedisRateLimiter(redis, { prefix: config.redisPrefix }), memoryLimiter, health);
    // The quota hands what it counted locally back to Redis when Redis returns (absorb), so
    // an outage never lets a drop-plan account past its cap; the limiter's windows need no hand-back.
    quota = new FallbackQuotaCounter(new RedisQuotaCounter(redis, seed, { clock, prefix: config.redisPrefix }), memoryQuota, { clock });
    state = withFailover<StateStore>(new RedisStateStore(redis, { prefix: config.redisPrefix }), memoryState, health);
    redisHealth = health;
  }
  const catalog = buildCatalog({ detectors: DETECTOR_SPECS, alertTypes: ALERT_TYPES, killChains: KILL_CHAINS });
  const enrichment = await createEnrichment({
    geoipCity: config.geoipCity,
    geoipAsn: config.geoipAsn,
    feedsDir: config.feedsDir,
    breachedHashFile: config.breachedHashFile,
    logger: options.logger ?? silentLogger,
  });
  return {
    config,
    store,
    limiter,
    quota,
    catalog,
    enrich: enrichment.stage,
    detect: createDetectStage({ state, clock }),
    alertClosed: (accountId, type, subject) => forgetAlert(state, accountId, type, subject),
    score: createScoreStage(),
    enrichment,
    clock,
    logger: options.logger,
    redisHealth,
    status: () => ({ redis: redisHealth ? (redisHealth.degraded ? 'degraded' : 'ok') : 'not configured', enrichment: enrichment.status() }),
    async shutdown() {
      await enrichment.close();
      await memoryState.close();
      await memoryLimiter.close();
      await memoryQuota.close();
      await store.close();
      redis?.disconnect();
    },
  };
}
