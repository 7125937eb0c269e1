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
      .map((e) => ({ accountId, eventId: e.eventId as string, response: { id: e.id, status: 'accepted' }, createdAt: now, payloadDigest: null })),
  };
}

interface Subject {
  readonly name: string;
  readonly store: Store;
  readonly ms: number[];
  /** Disk bytes per stored event, read before the store is closed. */
  readonly diskPerEvent: () => Promise<string>;
  readonly close: () => Promise<void>;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] as number;

async function sqlite(synchronous: 'full' | 'normal'): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  const store = openSqliteStore({ dataDir: dir, synchronous });
  return {
    name: `SQLite file, sync=${synchronous}`,
    store,
    ms: [],
    diskPerEvent: async () =>
      `${(statSync(join(dir, 'vigil.db')).size / (await store.events.countEvents('acc_bench'))).toFixed(0)} bytes (db file, WAL not checkpointed)`,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgres(): Promise<Subject | undefined> {
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
  } catch (err) {
    console.log(`PostgreSQL skipped: ${(err as Error).message}`);
    return undefined;
  }
  const schema = `vigil_bench_${randomBytes(4).toString('hex')}`;
  const store = openPostgresStore(PG_URL, { schema });
  return {
    name: 'PostgreSQL (partitioned)',
    store,
    ms: [],
    diskPerEvent: async () => {
      const { rows } = await admin.query<{ bytes: string; n: string }>(
        `select (select sum(pg_total_relation_size(inhrelid)) from pg_inherits where inhparent = '"${schema}".events'::regclass) as bytes, (select count(*) from "${schema}".events) as n`,
      );
      const row = rows[0] as { bytes: string; n: string };
      return `${(Number(row.bytes) / Number(row.n)).toFixed(0)} bytes (table, TOAST, 7 indexes)`;
    },
    close: async () => {
      await store.close();
      await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    },
  };
}

const subjects = [await sqlite('full'), await sqlite('normal'), await postgres()].filter((s): s is Subject => s !== undefined);
try {
  for (const s of subjects) {
    await s.store.migrate();
    await s.store.accounts.createAccount({ id: 'acc_bench', name: 'bench', plan: 'pro', createdAt: Date.now() });
    for (let i = 0; i < 3; i++) await s.store.commit(group('acc_bench')); // warm-up
  }
  // Round-robin, so a noisy neighbour slows every backend alike and the ratios hold.
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of subjects) {
      const batch = group('acc_bench');
      const start = process.hrtime.bigint();
      await s.store.commit(batch);
      s.ms.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const base = median(subjects[0]!.ms);
  for (const s of subjects) {
    const p50 = median(s.ms);
    console.log(
      `${s.name.padEnd(26)} commit of ${GROUP}: p50 ${p50.toFixed(2)} ms, p95 ${p95(s.ms).toFixed(2)} ms, ` +
        `${((p50 * 1000) / GROUP).toFixed(1)} µs/event, ${(p50 / base).toFixed(2)}x SQLite full; disk ${await s.diskPerEvent()}`,
    );
  }
} finally {
  for (const s of subjects) await s.close();
}
