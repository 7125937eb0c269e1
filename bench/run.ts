/**
 * End-to-end benchmark: starts the bare Fastify baseline and Vigil (embedded mode) as child
 * processes and drives both with autocannon in the same run, so figures are ratios against a
 * baseline measured on the same noisy machine.
 *   npm run bench                 all scenarios, 10 s each
 *   BENCH_SECONDS=5 npm run bench
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { benchEvent } from './workload.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ADMIN = 'bench-admin-token-0123456789';

interface Server {
  readonly port: number;
  readonly child: ChildProcess;
}

function start(args: string[], env: Record<string, string>, port: number): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`server ${args[0]} exited early (${code})`)));
    const poll = async () => {
      try {
        await fetch(`http://127.0.0.1:${port}/healthz`);
        resolve({ port, child });
      } catch {
        setTimeout(poll, 100);
      }
    };
    void poll();
  });
}

const freePort = () => 20000 + Math.floor(Math.random() * 20000);

async function postJson(url: string, headers: Record<string, string>, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

function bodies(count: number, batch: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    if (batch === 1) out.push(JSON.stringify(benchEvent(i)));
    else out.push(JSON.stringify({ events: Array.from({ length: batch }, (_, j) => benchEvent(i * batch + j)) }));
  }
  return out;
}

interface Row {
  scenario: string;
  target: string;
  reqPerSec: number;
  eventsPerSec: number;
  p50: number;
  p99: number;
  p999: number;
  non2xx: number;
  rssMb: number;
}

async function drive(target: string, scenario: string, server: Server, path: string, payloads: string[], batch: number, headers: Record<string, string>, rate?: number): Promise<Row> {
  let i = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: CONNECTIONS,
    duration: SECONDS,
    overallRate: rate,
    requests: [
      {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', ...headers },
        setupRequest: (req: autocannon.Request) => ({ ...req, body: payloads[i++ % payloads.length] }),
      },
    ],
  });
  const ok = result['2xx'];
  return {
    scenario,
    target,
    reqPerSec: Math.round(result.requests.average),
    eventsPerSec: Math.round((ok / SECONDS) * batch),
    p50: result.latency.p50,
    p99: result.latency.p99,
    p999: result.latency.p99_9 ?? result.latency.p99,
    non2xx: result.non2xx,
    rssMb: Math.round((await rssOf(server.child.pid as number)) / 1e6),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  const plansFile = join(dir, 'plans.json');
  writeFileSync(plansFile, JSON.stringify({ plans: { bench: { rpm: 1_000_000_000, eps: 1_000_000_000, batch_max: 100, monthly_cap: 1_000_000_000, overage: 'bill' } } }));
  const barePort = freePort();
  const bare = await start(['bench/bare-server.ts'], { PORT: String(barePort) }, barePort);
  const port = freePort();
  const vigil = await start(
    ['src/main.ts'],
    {
      VIGIL_PORT: String(port),
      VIGIL_HOST: '127.0.0.1',
      VIGIL_DATA_DIR: dir,
      VIGIL_PLANS_FILE: plansFile,
      VIGIL_IP_LIMITS: '127.0.0.1/32=1000000000',
      VIGIL_ADMIN_TOKEN: ADMIN,
      VIGIL_LOG_LEVEL: 'warn',
    },
    port,
  );
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const keyFor = async (plan: string) => {
    const acct = await postJson(`http://127.0.0.1:${port}/admin/accounts`, admin, { name: plan, plan });
    return (await postJson(`http://127.0.0.1:${port}/admin/accounts/${String(acct.id)}/keys`, admin, { kind: 'secret' })).key as string;
  };
  const key = await keyFor('bench');
  const auth = { authorization: `Bearer ${key}` };

  const single = bodies(5000, 1);
  const batch = bodies(200, 100);
  const rows: Row[] = [];
  rows.push(await drive('bare', 'single', bare, '/v1/events', single, 1, auth));
  rows.push(await drive('vigil', 'single', { ...vigil }, '/v1/events', single, 1, auth));
  rows.push(await drive('bare', 'batch100', bare, '/v1/events/batch', batch, 100, auth));
  rows.push(await drive('vigil', 'batch100', { ...vigil }, '/v1/events/batch', batch, 100, auth));
  const max = rows[1]?.reqPerSec ?? 0;
  rows.push(await drive('vigil', 'single@half-max', { ...vigil }, '/v1/events', single, 1, auth, Math.max(1, Math.round(max / 2))));

  // 429 flood: a free-plan key hammered far above its limit.
  const freeKey = await keyFor('free');
  rows.push(await drive('vigil', 'flood-429', { ...vigil }, '/v1/events', single, 1, { authorization: `Bearer ${freeKey}` }));

  console.table(rows);
  const ratio = (scenario: string, field: 'reqPerSec' | 'eventsPerSec') => {
    const b = rows.find((r) => r.target === 'bare' && r.scenario === scenario)?.[field] ?? 0;
    const v = rows.find((r) => r.target === 'vigil' && r.scenario === scenario)?.[field] ?? 0;
    return b > 0 ? (v / b).toFixed(2) : 'n/a';
  };
  console.log(`ratio vigil/bare single req/s:     ${ratio('single', 'reqPerSec')}`);
  console.log(`ratio vigil/bare batch100 events/s: ${ratio('batch100', 'eventsPerSec')}`);
  bare.child.kill('SIGTERM');
  vigil.child.kill('SIGTERM');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
