/**
 * Redis for tests: 127.0.0.1:6379 (or VIGIL_TEST_REDIS_URL). Absent, the Redis suites
 * skip with a message, except under CI=true, where absence fails the run. Each suite
 * writes under its own prefix and deletes it afterwards (the server may be shared).
 */
import { Redis } from 'ioredis';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { afterAll, describe, it } from 'vitest';

export const REDIS_URL = process.env.VIGIL_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Where the test Redis listens, for a proxy put in front of it. */
export function redisAddress(): { readonly host: string; readonly port: number } {
  const url = new URL(REDIS_URL);
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1', port: Number(url.port || 6379) };
}

/** The test Redis's URL (its database index and credentials kept) reached through a local proxy's port. */
export function redisUrlThrough(proxyPort: number): string {
  const url = new URL(REDIS_URL);
  url.hostname = '127.0.0.1';
  url.port = String(proxyPort);
  return url.toString();
}

export interface TestRedis {
  readonly client: Redis;
  readonly prefix: string;
  /** Deletes every key under the prefix and closes the client. */
  cleanup(): Promise<void>;
}

export async function connectTestRedis(suite: string): Promise<TestRedis | undefined> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    const why = `Redis not reachable at ${REDIS_URL} (${(err as Error).message})`;
    if (process.env.CI === 'true') throw new Error(`${why}: the ${suite} suite needs it under CI=true`);
    console.warn(`SKIPPED ${suite}: ${why}`);
    return undefined;
  }
  const prefix = `vigil-test:${suite}:${process.pid}-${Math.random().toString(36).slice(2, 8)}:`;
  return {
    client,
    prefix,
    async cleanup() {
      await deleteKeysWithPrefix(client, prefix);
      await client.quit();
    },
  };
}

/** A describe block that gets the connected Redis, or shows as skipped when there is none. */
export function describeWithRedis(name: string, redis: TestRedis | undefined, body: (redis: TestRedis) => void): void {
  if (!redis) {
    describe.skip(`${name} (skipped: Redis not reachable at ${REDIS_URL})`, () => {
      it('needs Redis', () => {});
    });
    return;
  }
  describe(name, () => {
    afterAll(() => redis.cleanup());
    body(redis);
  });
}
