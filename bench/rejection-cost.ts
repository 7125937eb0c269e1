/**
 * CPU spent answering the most expensive rejections this bench can construct, through the whole
 * HTTP lifecycle (Fastify inject, in process: no client or socket cost is counted). For each
 * body: `ROUNDS` (3) rounds of `N` (10) requests, process CPU (user + system, process.cpuUsage())
 * around each round, the median round divided by N. A valid batch of 100 events and a valid
 * single event are measured the same way as a reference, and each body's JSON.parse alone.
 *
 *   npx tsx bench/rejection-cost.ts
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { createServices } from '../src/services.js';

const N = Number(process.env.N ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const dir = mkdtempSync(join(tmpdir(), 'vigil-rejection-'));
const plansFile = join(dir, 'plans.json');
const high = { rpm: 100_000_000, eps: 100_000_000 };
writeFileSync(plansFile, JSON.stringify({ plans: { pro: high } }));
const config = loadConfig({
  VIGIL_DATA_DIR: ':memory:',
  VIGIL_SQLITE_SYNCHRONOUS: 'normal',
  VIGIL_PLANS_FILE: plansFile,
  VIGIL_IP_LIMITS: '127.0.0.0/8=1000000000',
  VIGIL_ADMIN_TOKEN: 'bench-admin-token-0123456789',
});
const services = await createServices(config);
const vigil = await buildApp(services);
const account = await vigil.accounts.create('bench', 'pro');
if (!account.ok) throw new Error(account.message);
const created = await vigil.accounts.createKey(account.value.id, 'secret');
if (!created.ok) throw new Error(created.message);
const key = created.value.key;

const base = { event: 'auth.login.failure', actor_id: 'alice', ip: '203.0.113.7' };
const bigString = (n: number) => 'x'.repeat(n);

interface Case {
  readonly name: string;
  readonly url: '/v1/events' | '/v1/events/batch';
  readonly body: string;
}

let seq = 0;
const validEvent = () => ({ ...base, actor_id: `user-${seq++ % 1000}` });
const CASES: Case[] = [
  // A string `metadata.extra` beside an unknown top-level field, as large as the body limit allows.
  { name: 'single: 62 KB string extra + unknown field', url: '/v1/events', body: JSON.stringify({ ...base, metadata: { extra: bigString(62_000) }, x: 1 }) },
  // Unknown top-level fields only: each becomes a key of metadata.extra.
  {
    name: 'single: 6,000 unknown top-level fields',
    url: '/v1/events',
    body: JSON.stringify({ ...base, ...Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`f${i}`, 1])) }),
  },
  {
    name: 'batch: 100 x 9.9 KB string extra + unknown field',
    url: '/v1/events/batch',
    body: JSON.stringify({ events: Array.from({ length: 100 }, () => ({ ...base, metadata: { extra: bigString(9_900) }, x: 1 })) }),
  },
  {
    name: 'batch: 100 x 9 KB metadata of small keys, last event invalid',
    url: '/v1/events/batch',
    body: JSON.stringify({
      events: Array.from({ length: 100 }, (_, n) => ({
        ...base,
        ...(n === 99 ? { ip: 'nope' } : {}),
        metadata: Object.fromEntries(Array.from({ length: 1_100 }, (_, i) => [`k${i}`, 1])),
      })),
    }),
  },
  {
    name: 'batch: 100 x 1,000 unknown fields, last event invalid',
    url: '/v1/events/batch',
    body: JSON.stringify({
      events: Array.from({ length: 100 }, (_, n) => ({
        ...base,
        ...(n === 99 ? { ip: 'nope' } : {}),
        ...Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`u${i}`, 1])),
      })),
    }),
  },
  {
    name: 'batch: 100 events with every field wrong',
    url: '/v1/events/batch',
    body: JSON.stringify({
      events: Array.from({ length: 100 }, () => ({
        event: 'Bad Type',
        actor_id: 1,
        ip: 'nope',
        email: 'nope',
        timestamp: 'yesterday',
        user_agent: 1,
        session_id: 1,
        host: 1,
        request: 1,
        metadata: 1,
      })),
    }),
  },
  {
    name: 'batch: 80,000 unknown batch fields',
    url: '/v1/events/batch',
    body: JSON.stringify({ events: [base], ...Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, 1])) }),
  },
  {
    name: 'batch: 100 events 32 levels deep + 1',
    url: '/v1/events/batch',
    body: JSON.stringify({ events: Array.from({ length: 100 }, () => ({ ...base, metadata: nest(33) })) }),
  },
  {
    name: 'batch: 30,000 events (over batch size)',
    url: '/v1/events/batch',
    body: JSON.stringify({ events: Array.from({ length: 30_000 }, () => ({ event: 'a.b' })) }),
  },
];

function nest(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

async function measure(c: { url: string; body: () => string }): Promise<{ us: number; status: number; bytes: number }> {
  const rounds: number[] = [];
  let status = 0;
  let bytes = 0;
  // One unmeasured round warms the JIT.
  for (let r = 0; r <= ROUNDS; r++) {
    const bodies = Array.from({ length: N }, () => c.body());
    const start = process.cpuUsage();
    for (const payload of bodies) {
      const res = await vigil.app.inject({
        method: 'POST',
        url: c.url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload,
      });
      status = res.statusCode;
      bytes = res.rawPayload.length;
    }
    const used = process.cpuUsage(start);
    if (r > 0) rounds.push((used.user + used.system) / N);
  }
  rounds.sort((a, b) => a - b);
  return { us: rounds[Math.floor(rounds.length / 2)] as number, status, bytes };
}

/** CPU of JSON.parse alone on the body: the part of any answer that no check can avoid. */
function parseCost(body: string): number {
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) JSON.parse(body);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / N;
}

const rows: string[][] = [['case', 'body KB', 'status', 'answer bytes', 'µs CPU per request', 'µs JSON.parse alone']];
for (const c of CASES) {
  const { us, status, bytes } = await measure({ url: c.url, body: () => c.body });
  rows.push([c.name, (c.body.length / 1024).toFixed(0), String(status), String(bytes), us.toFixed(0), parseCost(c.body).toFixed(0)]);
}
const reference: { name: string; url: string; body: () => string }[] = [
  { name: 'reference: valid single event', url: '/v1/events', body: () => JSON.stringify(validEvent()) },
  { name: 'reference: valid batch of 100', url: '/v1/events/batch', body: () => JSON.stringify({ events: Array.from({ length: 100 }, validEvent) }) },
];
for (const c of reference) {
  const { us, status, bytes } = await measure(c);
  rows.push([c.name, (c.body().length / 1024).toFixed(0), String(status), String(bytes), us.toFixed(0), parseCost(c.body()).toFixed(0)]);
}

const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));

await vigil.close();
await services.shutdown();
