import { testApp, type TestApp } from '../helpers/app.js';
import { REDIS_URL, type TestRedis } from '../limits/redis-helper.js';
import { adminPool, dropSchema, freshSchema, openTestStore } from '../storage/pg-helpers.js';
import { ManualClock } from '../../src/util/clock.js';

export interface Cluster {
  readonly apps: readonly TestApp[];
  readonly clock: ManualClock;
  close(): Promise<void>;
}

/**
 * `n` app instances as separate services, each with its own PostgreSQL pool and Redis client,
 * sharing one schema, one Redis key prefix and one (manual) clock: several instances behind a
 * load balancer, in one process.
 */
export async function sharedInstances(n: number, redis: TestRedis, env: Record<string, string> = {}, redisUrl = REDIS_URL): Promise<Cluster> {
  const clock = new ManualClock(Date.UTC(2026, 0, 15, 12, 0, 0));
  const schema = freshSchema();
  const apps: TestApp[] = [];
  for (let i = 0; i < n; i++) {
    const { store } = await openTestStore({ schema, clock });
    apps.push(await testApp({ VIGIL_REDIS_URL: redisUrl, VIGIL_REDIS_PREFIX: redis.prefix, VIGIL_IP_LIMITS: '0.0.0.0/0=100000000', ...env }, { store, clock }));
  }
  return {
    apps,
    clock,
    async close() {
      for (const app of apps) await app.close();
      const admin = adminPool();
      await dropSchema(admin, schema).finally(() => admin.end());
    },
  };
}
