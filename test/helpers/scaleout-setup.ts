// Runs before each file of the scale-out project: without PostgreSQL and Redis the
// project is skipped with a message, except under CI=true, where their absence fails.
import pg from 'pg';
import { Redis } from 'ioredis';
import { beforeEach } from 'vitest';
import { PG_URL } from '../storage/pg-helpers.js';
import { REDIS_URL } from '../limits/redis-helper.js';

async function missing(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    return `PostgreSQL at ${PG_URL}: ${(err as Error).message}`;
  } finally {
    await client.end().catch(() => {});
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    return `Redis at ${REDIS_URL}: ${(err as Error).message}`;
  } finally {
    redis.disconnect();
  }
  return undefined;
}

const why = await missing();
if (why) {
  if (process.env.CI === 'true') throw new Error(`scale-out suites need ${why} (CI=true)`);
  console.warn(`[skip] scale-out HTTP suites: ${why}`);
  beforeEach((ctx) => ctx.skip());
}
