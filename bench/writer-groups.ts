/**
 * The SQLite writer thread's CPU per event by the size of the commit group: the same events
 * committed through the service's store (a database file, WAL, synchronous=FULL, the writer and
 * checkpoint threads), one group at a time, in groups of SIZES events, after WARMUP events;
 * CPU of the threads named vigil-writer and vigil-checkpt from /proc/self/task (10 ms ticks),
 * median of ROUNDS alternating rounds of EVENTS events per size. What a commit costs the writer
 * whatever its size is what single events, whose groups are small, pay per event on top.
 *   npx tsx bench/writer-groups.ts
 *   SIZES=1,4,14,100  EVENTS=20000  ROUNDS=3  WARMUP=50000
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../src/storage/sqlite.js';
import type { CommitBatch, EventRow } from '../src/storage/types.js';
import { newId } from '../src/util/ids.js';

const SIZES = (process.env.SIZES ?? '1,4,14,100').split(',').map(Number);
const EVENTS = Number(process.env.EVENTS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 50_000);
const WRITER_THREADS = new Set(['vigil-writer', 'vigil-checkpt']);

function writerCpuUs(): number {
  let us = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    if (!WRITER_THREADS.has(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')))) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    us += (Number(fields[11]) + Number(fields[12])) * 10_000;
  }
  return us;
}

const TYPES = ['auth.login.failure', 'auth.login.success', 'api.request'];
let sequence = 0;
/** A commit group of `size` events from 20,000 actors and as many addresses, with its usage delta. */
function group(accountId: string, size: number): CommitBatch {
  const now = Date.now();
  const events: EventRow[] = Array.from({ length: size }, () => {
    const n = sequence++;
    const id = newId('evt', now);
    return {
      id,
      accountId,
      type: TYPES[n % TYPES.length] as string,
      eventId: null,
      occurredAt: now - 1_000,
      receivedAt: now,
      actorId: `user_${n % 20_000}`,
      ip: `203.0.${(n >> 8) % 80}.${n % 250}`,
      riskScore: n % 100,
      tags: [],
      doc: {
        id,
        event: TYPES[n % TYPES.length],
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
        enrichment: { geo: { country: 'DE', city: 'Berlin', lat: 52.52, lon: 13.4 }, asn: { number: 3320, org: 'Deutsche Telekom AG' } },
        risk: { score: n % 100, level: 'low', action: 'allow', breakdown: [{ source: 'base', points: 10 }] },
        metadata: { attempt: n, note: 'x'.repeat(500) },
      },
    };
  });
  const day = new Date(now).toISOString();
  return { events, alerts: [], usage: [{ accountId, period: day.slice(0, 7), day: day.slice(0, 10), used: size, dropped: 0 }], idempotency: [] };
}

const dataDir = mkdtempSync(join(tmpdir(), 'vigil-writer-groups-'));
const store = openSqliteStore({ dataDir, synchronous: 'full' });
await store.migrate();
const { id: accountId } = await store.accounts.createAccount({ id: 'acc_bench', name: 'bench', plan: 'pro', createdAt: Date.now() });
for (let done = 0; done < WARMUP; done += 100) await store.commit(group(accountId, 100));

const perSize = new Map<number, number[]>(SIZES.map((size) => [size, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const size of round % 2 === 0 ? SIZES : [...SIZES].reverse()) {
    const before = writerCpuUs();
    for (let done = 0; done < EVENTS; done += size) await store.commit(group(accountId, size));
    perSize.get(size)!.push((writerCpuUs() - before) / EVENTS);
  }
}
await store.close();
rmSync(dataDir, { recursive: true, force: true });

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
console.table(SIZES.map((size) => ({ 'events per group': size, 'writer µs per event': median(perSize.get(size)!).toFixed(1) })));
