/**
 * Scale-out next to embedded, in one run: the workload of bench/run.ts against
 * Vigil on SQLite + memory (one process), then on PostgreSQL + Redis with one process and with
 * two processes on two ports (connections split between them), single events and batches of
 * 100. Figures are ratios scale-out / embedded, measured on the same machine in the same run.
 *   BENCH_SECONDS=5 npx tsx bench/scaleout.ts
 * PostgreSQL: VIGIL_BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/test; a fresh
 * schema, dropped afterwards). Redis: VIGIL_BENCH_REDIS_URL (default redis://127.0.0.1:6379; a
 * fresh key prefix, deleted afterwards).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { deleteKeysWithPrefix } from '../test/helpers/redis-keys.js';
import pg from 'pg';
import { BENCH_PLANS, bodies, drive, freePort, keyFor, start, vigilEnv, type Row, type Server } from './lib.js';

const PG_URL = process.env.VIGIL_BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS_URL = process.env.VIGIL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WARM_UP_SECONDS = 2;

const stop = (servers: readonly Server[]) => servers.forEach((s) => s.child.kill('SIGTERM'));

/** The URL with `search_path` set to `schema` for every connection. */
function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

async function measure(target: string, servers: readonly Server[], key: string, single: string[], batch: string[]): Promise<Row[]> {
  const auth = { authorization: `Bearer ${key}` };
  await drive(target, 'warm-up', servers, '/v1/events', single, 1, auth, undefined, WARM_UP_SECONDS); // JIT, pools, script cache
  return [
    await drive(target, 'single', servers, '/v1/events', single, 1, auth),
    await drive(target, 'batch100', servers, '/v1/events/batch', batch, 100, auth),
  ];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  const plansFile = join(dir, 'plans.json');
  writeFileSync(plansFile, BENCH_PLANS);
  const single = bodies(5000, 1);
  const batch = bodies(200, 100);
  const rows: Row[] = [];

  const embeddedPort = await freePort();
  const embedded = await start(['src/main.ts'], vigilEnv(embeddedPort, plansFile, { VIGIL_DATA_DIR: dir }), embeddedPort);
  rows.push(...(await measure('embedded x1', [embedded], await keyFor(embeddedPort, 'bench'), single, batch)));
  stop([embedded]);

  const schema = `vigil_bench_${randomBytes(4).toString('hex')}`;
  const prefix = `vigil-bench:${schema}:`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  await admin.query(`create schema "${schema}"`);
  const scaleOut = (port: number) =>
    vigilEnv(port, plansFile, { VIGIL_DATA_DIR: dir, VIGIL_DATABASE_URL: withSchema(PG_URL, schema), VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: prefix });
  const servers: Server[] = [];
  try {
    const p1 = await freePort();
    servers.push(await start(['src/main.ts'], scaleOut(p1), p1));
    const key = await keyFor(p1, 'bench');
    rows.push(...(await measure('scale-out x1', servers, key, single, batch)));
    const p2 = await freePort(); // p1 is listening, so the OS cannot hand it out again
    servers.push(await start(['src/main.ts'], scaleOut(p2), p2));
    rows.push(...(await measure('scale-out x2', servers, key, single, batch)));
  } finally {
    stop(servers);
    await admin.query(`drop schema if exists "${schema}" cascade`).finally(() => admin.end());
    const redis = new Redis(REDIS_URL);
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  }

  console.table(rows);
  const of = (target: string, scenario: string) => rows.find((r) => r.target === target && r.scenario === scenario);
  for (const scenario of ['single', 'batch100']) {
    const base = of('embedded x1', scenario);
    for (const target of ['scale-out x1', 'scale-out x2']) {
      const row = of(target, scenario);
      if (!base || !row || base.eventsPerSec === 0) continue;
      console.log(
        `${scenario.padEnd(8)} ${target} / embedded x1: events/s ${(row.eventsPerSec / base.eventsPerSec).toFixed(2)}, p99 ${(row.p99 / Math.max(1, base.p99)).toFixed(2)}`,
      );
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
