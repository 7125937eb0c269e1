import type { Cluster, Redis } from 'ioredis';
import type { StateStore } from '../detection/state/state-store.js';
import type { QuotaCounter, RateLimiter, UsageSeed } from '../limits/types.js';
import type { Clock } from '../util/clock.js';
import { mastersOpened } from './cluster-nodes.js';
import { Failover, FailoverQuotaCounter, FailoverRateLimiter, FailoverStateStore } from './failover.js';
import { RedisQuotaCounter } from './quota-counter.js';
import { RedisRateLimiter } from './rate-limiter.js';
import { RedisStateStore } from './state-store.js';
import { RedisLiveFeed } from './live-feed.js';
import { RedisDryRunStates } from './dry-run-states.js';

/**
 * How long a command may wait for its answer. Redis answers in well under a millisecond; one that
 * stops answering (stopped, overloaded, a network that drops packets on an open connection)
 * would otherwise hold every request until the connection dies, where a failed command makes
 * the service go on with this instance's own state at once.
 */
export const COMMAND_TIMEOUT_MS = 500;

/**
 * Redis client for the scale-out mode: fail fast while disconnected (no offline queue), reconnect
 * forever. With `cluster`, `url` is one node of a Redis Cluster (its credentials serve every node);
 * the client discovers the others and follows slot moves.
 */
export async function openRedis(url: string, options: { cluster?: boolean } = {}): Promise<Redis | Cluster> {
  const { Cluster, Redis } = await import('ioredis');
  const backoff = (attempt: number) => Math.min(attempt * 200, 2_000);
  const common = { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: COMMAND_TIMEOUT_MS };
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
 * Resolves true once the client can send commands (a cluster: once its masters' connections are
 * open too, see mastersOpened), or false after `ms`.
 */
export function connectionReady(redis: Redis | Cluster, ms: number): Promise<boolean> {
  const whole = (async () => {
    if (redis.status !== 'ready') await new Promise<void>((resolve) => redis.once('ready', resolve));
    if ('nodes' in redis) await mastersOpened(redis);
    return true;
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([whole, late]).finally(() => clearTimeout(timer));
}

/** How long start-up waits for Redis before the service takes traffic on this instance's own state. */
export const STARTUP_WAIT_MS = 5_000;

/** This instance's own state, which serves while Redis is away. */
export interface StandIns {
  readonly limiter: RateLimiter;
  readonly quota: QuotaCounter & { clear(): void };
  readonly state: StateStore;
}

export interface RedisBackend {
  readonly limiter: RateLimiter;
  readonly quota: QuotaCounter;
  readonly state: StateStore;
  /** Whether calls are served by this instance's memory (Redis away); one flag for all three. */
  readonly health: { readonly degraded: boolean };
  /** Live streams of every instance (pub/sub on a connection of its own). */
  readonly live: RedisLiveFeed;
  /** Paged dry runs' states, shared by the instances. */
  readonly dryRunStates: RedisDryRunStates;
  /** Disconnects the client (the stand-ins belong to the caller). */
  close(): void;
}

export interface RedisBackendOptions {
  readonly url: string;
  readonly cluster: boolean;
  /** Prefix of every key (several deployments can share one Redis). */
  readonly prefix: string;
  readonly clock: Clock;
  /** Loads a month's persisted usage the first time the quota needs it. */
  readonly seed: UsageSeed;
  readonly standIns: StandIns;
  readonly onChange?: (degraded: boolean, reason?: unknown) => void;
  /** Longest wait for the connection at start-up (ms); default STARTUP_WAIT_MS. */
  readonly startupWaitMs?: number;
}

/**
 * Everything the service keeps in Redis, behind one connection and one failover: the limiter,
 * the quota counter and the detection state store, each wrapped so that it falls back to the
 * stand-in while Redis is away.
 */
export async function openRedisBackend(options: RedisBackendOptions): Promise<RedisBackend> {
  const redis = await openRedis(options.url, { cluster: options.cluster });
  const failover = new Failover('redis', { onChange: options.onChange });
  redis.on('ready', () => failover.connectionReady());
  redis.on('error', (err) => failover.connectionLost(err));
  redis.on('close', () => failover.connectionLost('connection closed'));
  // Requests that arrive before the connection is up would run on local state: the first ones
  // after a start would not see (or add to) the shared windows. Redis still away after the wait
  // is the same as Redis lost later: the first call marks the service degraded.
  await connectionReady(redis, options.startupWaitMs ?? STARTUP_WAIT_MS);
  const { prefix, clock, standIns } = options;
  return {
    limiter: new FailoverRateLimiter(new RedisRateLimiter(redis, { prefix }), standIns.limiter, failover),
    quota: new FailoverQuotaCounter(new RedisQuotaCounter(redis, options.seed, { clock, prefix }), standIns.quota, failover),
    state: new FailoverStateStore(new RedisStateStore(redis, { prefix }), standIns.state, failover),
    health: failover,
    live: new RedisLiveFeed(redis, { prefix }),
    dryRunStates: new RedisDryRunStates(redis, prefix),
    close: () => redis.disconnect(),
  };
}
