import type { FastifyBaseLogger } from 'fastify';
import type { AppDeps } from './app.js';
import { buildCatalog } from './catalog/catalog.js';
import type { Config } from './config/config.js';
import { PseudonymKeys } from './privacy/pseudonym.js';
import { MemoryQuotaCounter } from './limits/memory-quota.js';
import { MemoryRateLimiter } from './limits/memory-limiter.js';
import { createEnrichment, type EnrichmentService } from './enrichment/index.js';
import { prepareFeedsDir } from './enrichment/feeds/defaults.js';
import type { EnrichmentLogger } from './enrichment/logger.js';
import { ALERT_TYPES, DETECTOR_SPECS, KILL_CHAINS } from './detection/specs.js';
import { MemoryStateStore } from './detection/state/memory-state-store.js';
import { forgetAlert } from './detection/engine.js';
import type { StateStore } from './detection/state/state-store.js';
import { openSqliteStore } from './storage/sqlite.js';
import type { Store } from './storage/store.js';
import { systemClock, type Clock } from './util/clock.js';
import type { QuotaCounter, RateLimiter } from './limits/types.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { systemResolver } from './webhooks/ssrf.js';
import { ThreatModelRegistry } from './threat-models/registry.js';
import { ModelCostWatch } from './threat-models/cost-watch.js';
import type { SuspensionPolicy } from './threat-models/budget.js';
import { LocalLiveFeed } from './storage/live-feed.js';

const silentLogger: EnrichmentLogger = { warn: () => undefined, info: () => undefined };

export interface Services extends AppDeps {
  readonly enrichment: EnrichmentService;
  /** Present in scale-out mode: whether Redis is reachable from this instance. */
  readonly redisHealth?: { readonly degraded: boolean };
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
 * Builds the backends named by the configuration: SQLite and in-memory state by default;
 * PostgreSQL and Redis when their URLs are set.
 */
export async function createServices(
  config: Config,
  options: {
    clock?: Clock;
    logger?: FastifyBaseLogger;
    store?: Store;
    /** Enrichment opened by the caller (tests share one across services); the caller closes it. */
    enrichment?: EnrichmentService;
    onBackendChange?: (backend: string, degraded: boolean, reason?: unknown) => void;
    /** In place of parts of SUSPENSION_POLICY (tests that suspend a model within seconds). */
    threatModelBudget?: Partial<SuspensionPolicy>;
  } = {},
): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? (await openStore(config, options.logger));
  await store.migrate();
  const seed = (accountId: string, period: string) => store.stats.getUsage(accountId, period);
  const memoryLimiter = new MemoryRateLimiter();
  const memoryQuota = new MemoryQuotaCounter(seed);
  const memoryState = new MemoryStateStore({ clock });
  const redis = config.redisUrl
    ? await (
        await import('./redis/backend.js')
      ).openRedisBackend({
        url: config.redisUrl,
        cluster: config.redisCluster,
        prefix: config.redisPrefix,
        clock,
        seed,
        standIns: { limiter: memoryLimiter, quota: memoryQuota, state: memoryState },
        onChange: (degraded, reason) => options.onBackendChange?.('redis', degraded, reason),
      })
    : undefined;
  const limiter: RateLimiter = redis?.limiter ?? memoryLimiter;
  const quota: QuotaCounter = redis?.quota ?? memoryQuota;
  const state: StateStore = redis?.state ?? memoryState;
  const redisHealth = redis?.health;
  const live = redis?.live ?? new LocalLiveFeed();
  const webhookGuard = { allowed: config.webhooks.allowCidrs, resolve: systemResolver };
  const webhookDispatcher = new WebhookDispatcher({ webhooks: store.webhooks, clock, config: config.webhooks, guard: webhookGuard, log: options.logger });
  webhookDispatcher.start();
  const threatModels = new ThreatModelRegistry(store.threatModels, state, {
    onCompileError: (row, err) => options.logger?.error({ err, model: row.id, version: row.version }, 'threat model does not compile; skipped'),
  });
  const threatModelCosts = new ModelCostWatch({
    store: store.threatModels,
    registry: threatModels,
    clock,
    ...(options.threatModelBudget ? { policy: options.threatModelBudget } : {}),
    ...(options.logger ? { log: options.logger } : {}),
  });
  const catalog = buildCatalog({ detectors: DETECTOR_SPECS, alertTypes: ALERT_TYPES, killChains: KILL_CHAINS });
  // The data directory's feeds folder starts with the default feeds.json, so `vigil feeds update`
  // fills it and the running service picks the files up. Without it the service still runs,
  // without Tor and blocklist signals, as it does without feeds.
  const defaultFeeds = !options.enrichment && config.feedsDirIsDefault ? config.feedsDir : undefined;
  if (defaultFeeds)
    await prepareFeedsDir(defaultFeeds).catch((err: unknown) =>
      options.logger?.warn({ err, dir: defaultFeeds }, 'could not create the feeds folder with its default feeds.json'),
    );
  const enrichment =
    options.enrichment ??
    (await createEnrichment({
      geoipCity: config.geoipCity,
      geoipAsn: config.geoipAsn,
      feedsDir: config.feedsDir,
      breachedHashFile: config.breachedHashFile,
      logger: options.logger ?? silentLogger,
    }));
  return {
    config,
    store,
    limiter,
    quota,
    catalog,
    threatModels,
    threatModelCosts,
    enrichment,
    state,
    alertClosed: (accountId, type, subject) => forgetAlert(state, accountId, type, subject, clock.now()),
    clock,
    logger: options.logger,
    webhookGuard,
    webhookDispatcher,
    redisHealth,
    live,
    pseudonyms: new PseudonymKeys(config.pseudonymSecret),
    ...(redis ? { dryRunStates: redis.dryRunStates } : {}),
    status: () => ({ redis: redisHealth ? (redisHealth.degraded ? 'degraded' : 'ok') : 'not configured', enrichment: enrichment.status() }),
    async shutdown() {
      await webhookDispatcher.stop();
      await threatModelCosts.settled();
      if (!options.enrichment) await enrichment.close();
      await memoryState.close();
      await memoryLimiter.close();
      await memoryQuota.close();
      await live.close();
      await store.close();
      redis?.close();
    },
  };
}
