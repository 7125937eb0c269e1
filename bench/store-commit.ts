/**
 * Commit-group cost per backend, in one run: the same groups of events (with usage deltas and
 * idempotency rows, as the pipeline writes them) committed to SQLite (file, WAL; synchronous
 * FULL and NORMAL) and to PostgreSQL (fresh schema, dropped afterwards).
 *   npx tsx bench/store-commit.ts
 *   BENCH_GROUP=500 BENCH_ROUNDS=40 VIGIL_TEST_DATABASE_URL=postgres://… npx tsx bench/store-commit.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore } from '../src/storage/postgres.js';
import { openSqliteStore } from '../src/storage/sqlite.js';
import type { Store } from '../src/storage/store.js';
import type { CommitBatch, EventRow } from '../src/storage/types.js';
import { newId } from '../src/util/ids.js';

const GROUP = Number(process.env.BENCH_GROUP ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const PG_URL = process.env.VIGIL_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

function group(accountId: string): CommitBatch {
  const now = Date.now();
  const events: EventRow[] = Array.from({ length: GROUP }, (_, i) => {
    const id = newId('evt', now);
    return {
      id,
      accountId,
      type: ['auth.login.failure', 'auth.login.success', 'api.request'][i % 3] as string,
      eventId: i % 10 === 0 ? `client-${id}` : null,
      occurredAt: now - 1000,
      receivedAt: now,
      actorId: `user_${i % 200}`,
      ip: `203.0.113.${i % 250}`,
      riskScore: i % 100,
      tags: i % 7 === 0 ? ['inferred:auth.failure'] : [],
      doc: {
        id,
        event: 'auth.login.failure',
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
        enrichment: { geo: { country: 'DE', city: 'Berlin', lat: 52.52, lon: 13.4 }, asn: { number: 3320, org: 'Deutsche Telekom AG' }, threat_intel: [] },
        risk: { score: i % 100, level: 'low', action: 'allow', breakdown: [{ source: 'base', points: 10 }] },
        metadata: { plan: 'pro', attempt: i },
      },
    };
  });
  const day = new Date(now).toISOString();
  return {
    events,
    alerts: [],
    usage: [{ accountId, period: day.slice(0, 7), day: day.slice(0, 10), used: GROUP, dropped: 0 }],
    idempotency: events
      .filter((e) => e.eventId !== null)
      .map((e) => ({ accountId, eventId: e.eventId as string, response: { id: e.id, status: 'accepted' }, createdAt: now })),
  };
}

async function measure(name: string, store: Store): Promise<number> {
  await store.migrate();
  await store.createAccount({ id: 'acc_bench', name: 'bench', plan: 'pro', createdAt: Date.now() });
  for (let i = 0; i < 3; i++) await store.commit(group('acc_bench')); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const batch = group('acc_bench');
    const start = process.hrtime.bigint();
    await store.commit(batch);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const p50 = ms[Math.floor(ms.length / 2)] as number;
  const p95 = ms[Math.floor(ms.length * 0.95)] as number;
  console.log(
    `${name.padEnd(28)} commit of ${GROUP}: p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, ${((1000 / p50) * GROUP).toFixed(0)} events/s (${((p50 * 1000) / GROUP).toFixed(1)} µs/event)`,
  );
  return p50;
}

const results: Record<string, number> = {};
for (const synchronous of ['full', 'normal'] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  const store = openSqliteStore({ dataDir: dir, synchronous });
  results[`sqlite-${synchronous}`] = await measure(`SQLite file, sync=${synchronous}`, store);
  const events = await store.countEvents('acc_bench');
  await store.close();
  if (synchronous === 'full')
    console.log(`SQLite disk per event (file after checkpoint): ${(statSync(join(dir, 'vigil.db')).size / events).toFixed(0)} bytes over ${events} events`);
  rmSync(dir, { recursive: true, force: true });
}

const schema = `vigil_bench_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: PG_URL });
try {
  await admin.connect();
  const store = openPostgresStore(PG_URL, { schema });
  try {
    results.postgres = await measure('PostgreSQL (partitioned)', store);
    const { rows } = await admin.query<{ bytes: string; n: string }>(
      `select (select sum(pg_total_relation_size(inhrelid)) from pg_inherits where inhparent = '"${schema}".events'::regclass) as bytes, (select count(*) from "${schema}".events) as n`,
    );
    const row = rows[0] as { bytes: string; n: string };
    console.log(`PostgreSQL disk per event (table + 7 indexes): ${(Number(row.bytes) / Number(row.n)).toFixed(0)} bytes over ${row.n} events`);
  } finally {
    await store.close();
    await admin.query(`drop schema if exists "${schema}" cascade`);
  }
  console.log(`PostgreSQL / SQLite(full) p50 ratio: ${((results.postgres as number) / (results['sqlite-full'] as number)).toFixed(2)}`);
} catch (err) {
  console.log(`PostgreSQL skipped: ${(err as Error).message}`);
} finally {
  await admin.end().catch(() => {});
}
