/**
 * How long a batch whose events all carry a new event_id takes in scale-out mode: the ingestion
 * pipeline alone (no HTTP), in process on the built service's modules, on PostgreSQL (a fresh
 * schema, dropped at the end) and Redis (a fresh key prefix, deleted at the end), one batch at a
 * time. Prints the median and p90 of the batches after the warm-up.
 *   npm run build && npx tsx bench/idempotency-latency.ts
 *   VIGIL_BENCH_DATABASE_URL (postgres://root@127.0.0.1:5432/test)  VIGIL_BENCH_REDIS_URL (redis://127.0.0.1:6379)
 *   BATCHES=50  WARMUP=10  SIZE=100
 */
import { fullScopes } from '../src/event/account.js';
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { bodies, inProcessEnv, newEventId } from './lib.js';

const dist = new URL('../dist/src/', import.meta.url);
const { loadConfig } = (await import(new URL('config/config.js', dist).href)) as typeof import('../src/config/config.js');
const { createServices } = (await import(new URL('services.js', dist).href)) as typeof import('../src/services.js');
const { composeIngestPipeline } = (await import(new URL('pipeline/compose.js', dist).href)) as typeof import('../src/pipeline/compose.js');
const { newId } = (await import(new URL('util/ids.js', dist).href)) as typeof import('../src/util/ids.js');

const DATABASE_URL = process.env.VIGIL_BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS_URL = process.env.VIGIL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BATCHES = Number(process.env.BATCHES ?? 50);
const WARMUP = Number(process.env.WARMUP ?? 10);
const SIZE = Number(process.env.SIZE ?? 100);

const run = `${process.pid}_${Date.now().toString(36)}`;
const schema = `vigil_bench_${run}`;
const prefix = `vigil-bench:${run}:`;
const { dir, env } = inProcessEnv('idempotency-latency', {
  VIGIL_DATABASE_URL: `${DATABASE_URL}?schema=${schema}`,
  VIGIL_REDIS_URL: REDIS_URL,
  VIGIL_REDIS_PREFIX: prefix,
});
const config = loadConfig(env);
const services = await createServices(config);
const times: number[] = [];
try {
  const account = await services.store.accounts.createAccount({ id: newId('acc', Date.now()), name: 'bench', plan: 'bench', createdAt: Date.now() });
  const plan = config.plans.bench;
  if (plan === undefined) throw new Error('the bench plan is missing');
  const req = {
    account: {
      account,
      plan,
      keyId: 'key_bench',
      keyKind: 'secret' as const,
      principal: { kind: 'key' as const, keyId: 'key_bench', keyPrefix: 'vgl_sk_bench', scopes: fullScopes('secret') },
    },
    connectingIp: '127.0.0.1',
  };
  const { pipeline, commits } = composeIngestPipeline(services, {
    commits: { windowMs: 0, maxEvents: config.commitMaxEvents },
  });
  const payloads = bodies(WARMUP + BATCHES, SIZE);
  for (const [n, text] of payloads.entries()) {
    const body = JSON.parse(text) as { events: { event_id?: string }[] };
    for (const event of body.events) event.event_id = newEventId();
    const started = performance.now();
    const outcome = await pipeline.ingest({ kind: 'batch', body }, req);
    if (!outcome.ok) throw new Error(`${outcome.rejection.code}: ${outcome.rejection.message}`);
    if (n >= WARMUP) times.push(performance.now() - started);
  }
  await commits.flush();
} finally {
  await services.shutdown();
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`drop schema if exists "${schema}" cascade`).finally(() => admin.end());
  const redis = new Redis(REDIS_URL);
  for (let cursor = '0'; ;) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
    if (cursor === '0') break;
  }
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
}
times.sort((a, b) => a - b);
const at = (q: number) => (times[Math.min(times.length - 1, Math.floor(q * times.length))] as number).toFixed(1);
console.log(`batches of ${SIZE} events with new event ids, scale-out mode: median ${at(0.5)} ms, p90 ${at(0.9)} ms over ${times.length} batches`);
