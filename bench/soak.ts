/**
 * Soak: the real service as a child process under a steady, moderate, mixed workload.
 *   SOAK_SECONDS (default 600)  SOAK_RATE requests per second (default 200)
 *   SOAK_NODE_FLAGS  extra node flags for the service, e.g. "--expose-gc" or "--max-semi-space-size=16"
 *   SOAK_HEAP_SNAPSHOTS=1  the service writes a heap snapshot after warm-up and at the end (into
 *                          SOAK_SNAPSHOT_DIR, default the current directory), to diff by constructor
 * Every 10 s it samples RSS (/proc) and the V8 heap in use and external memory (/metrics).
 * Verdict: no growth beyond warm-up, judged over the second half of the run (the first half is
 * warm-up: caches, JIT, SQLite pages, detection windows filling). Heap in use is judged on the
 * mean of the last quarter's samples against the mean of the quarter before it (the heap saws
 * between collections, so single samples mislead); RSS on the same quarters. Tolerances: heap
 * +10% (at least 8 MB), RSS +5% (at least 16 MB). Also errors, stored vs accepted, clean exit.
 * Exit code 1 on FAIL. Run with `npm run soak`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchEvent } from './workload.js';
import { freePort, SERVICE_NODE_FLAGS } from './lib.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 200);
const NODE_FLAGS = (process.env.SOAK_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const SNAPSHOTS = process.env.SOAK_HEAP_SNAPSHOTS === '1';
const SAMPLE_MS = 10_000;
const ADMIN = 'soak-admin-token-0123456789';
const MB = 1024 * 1024;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** The value of a Prometheus sample line `name value` (no labels), in MB. */
function gaugeMb(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) / MB : NaN;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  t: number;
  rss: number;
  heapUsed: number;
  external: number;
}

const mean = (xs: readonly number[]) => {
  const known = xs.filter(Number.isFinite);
  return known.reduce((a, b) => a + b, 0) / Math.max(1, known.length);
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-soak-'));
  const plans = join(dir, 'plans.json');
  const high = { rpm: 100_000_000, eps: 100_000_000 };
  writeFileSync(plans, JSON.stringify({ plans: { starter: high, pro: high, business: high } }));
  const port = await freePort();
  const snapshotDir = resolve(process.env.SOAK_SNAPSHOT_DIR ?? '.');
  const flags = [...NODE_FLAGS, ...(SNAPSHOTS ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : [])];
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...flags, '--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      VIGIL_PORT: String(port),
      VIGIL_HOST: '127.0.0.1',
      VIGIL_DATA_DIR: join(dir, 'data'),
      VIGIL_ADMIN_TOKEN: ADMIN,
      VIGIL_PLANS_FILE: plans,
      VIGIL_IP_LIMITS: '127.0.0.0/8=1000000000',
      VIGIL_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid as number;
  process.on('exit', () => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 1200) throw new Error(`service did not start:\n${output}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    await sleep(50);
  }
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const account = (await (
    await fetch(`${base}/admin/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'soak', plan: 'business' }) })
  ).json()) as { id: string };
  const { key } = (await (
    await fetch(`${base}/admin/accounts/${account.id}/keys`, { method: 'POST', headers: admin, body: JSON.stringify({ kind: 'secret' }) })
  ).json()) as { key: string };
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  async function sample(t: number): Promise<Sample> {
    // A failed scrape (the service busy writing a heap snapshot) leaves the heap figures out of this sample.
    const metrics = await fetch(`${base}/metrics`)
      .then((res) => res.text())
      .catch(() => '');
    return {
      t,
      rss: rssMb(pid),
      heapUsed: gaugeMb(metrics, 'vigil_nodejs_heap_size_used_bytes'),
      external: gaugeMb(metrics, 'vigil_nodejs_external_memory_bytes'),
    };
  }

  let sent = 0;
  let accepted = 0;
  let reads = 0;
  const errors = new Map<string, number>();
  const error = (what: string) => errors.set(what, (errors.get(what) ?? 0) + 1);
  let seq = 0;

  async function one(i: number): Promise<void> {
    sent++;
    try {
      const kind = i % 10;
      if (kind === 9) {
        const res = await fetch(`${base}/v1/events?limit=20&actor_id=user-${i % 100}`, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) error(`GET ${res.status}`);
        else reads++;
      } else if (kind === 8) {
        const events = Array.from({ length: 10 }, (_, k) => ({ ...benchEvent(seq++), event_id: `soak-b-${i}-${k}` }));
        const res = await fetch(`${base}/v1/events/batch`, { method: 'POST', headers, body: JSON.stringify({ events }) });
        const body = (await res.json()) as { accepted?: number };
        if (res.status !== 202) error(`batch ${res.status}`);
        else accepted += body.accepted ?? 0;
      } else {
        const res = await fetch(`${base}/v1/events`, { method: 'POST', headers, body: JSON.stringify({ ...benchEvent(seq++), event_id: `soak-${i}` }) });
        const body = (await res.json()) as { status?: string };
        if (res.status !== 202) error(`single ${res.status}`);
        else if (body.status === 'accepted') accepted++;
      }
    } catch (err) {
      error(`network ${(err as Error).message}`);
    }
  }

  const samples: Sample[] = [await sample(0)];
  const started = performance.now();
  const inflight = new Set<Promise<void>>();
  let i = 0;
  let nextSample = SAMPLE_MS;
  let midSnapshot = !SNAPSHOTS;
  // Steady open-loop rate: every 50 ms, the requests due by now (bounded in flight).
  while (performance.now() - started < SECONDS * 1000) {
    const elapsed = performance.now() - started;
    const due = Math.floor((elapsed / 1000) * RATE);
    while (i < due && inflight.size < 256) {
      const p = one(i++).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    if (elapsed >= nextSample) {
      const s = await sample(Math.round(elapsed / 1000));
      samples.push(s);
      console.log(
        `t=${s.t}s rss=${s.rss.toFixed(1)} MB heapUsed=${s.heapUsed.toFixed(1)} MB external=${s.external.toFixed(1)} MB sent=${sent} accepted=${accepted} errors=${[...errors.values()].reduce((a, b) => a + b, 0)}`,
      );
      nextSample += SAMPLE_MS;
      if (!midSnapshot && elapsed >= (SECONDS * 1000) / 2) {
        midSnapshot = true;
        process.kill(pid, 'SIGUSR2');
      }
    }
    await sleep(50);
  }
  await Promise.all(inflight);
  samples.push(await sample(Math.round((performance.now() - started) / 1000)));
  if (SNAPSHOTS) {
    process.kill(pid, 'SIGUSR2');
    await sleep(15_000); // writing a snapshot blocks the service; let it finish before SIGTERM
  }

  const usage = (await (await fetch(`${base}/v1/usage`, { headers })).json()) as { used: number };
  child.kill('SIGTERM');
  const exitCode = await new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

  const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
  console.log(
    `\nsoak: ${SECONDS} s at ${RATE} req/s: ${sent} requests (${reads} reads), ${accepted} events accepted (202), errors ${errorCount}${errorCount ? ` ${JSON.stringify(Object.fromEntries(errors))}` : ''}`,
  );
  console.log(`stored (GET /v1/usage used): ${usage.used}; accepted: ${accepted}; ${usage.used === accepted ? 'equal' : 'DIFFERENT'}`);

  // Second half: its first quarter-of-the-run against its last.
  const q = Math.max(1, Math.floor(samples.length / 4));
  const third = samples.slice(samples.length - 2 * q, samples.length - q);
  const fourth = samples.slice(samples.length - q);
  const judge = (what: 'heapUsed' | 'rss', share: number, floorMb: number) => {
    const from = mean(third.map((s) => s[what]));
    const to = mean(fourth.map((s) => s[what]));
    const limit = Math.max(floorMb, from * share);
    const ok = to - from <= limit;
    console.log(
      `${what}: t=${third[0]!.t}-${third.at(-1)!.t}s mean ${from.toFixed(1)} MB -> t=${fourth[0]!.t}-${fourth.at(-1)!.t}s mean ${to.toFixed(1)} MB: growth ${(to - from).toFixed(1)} MB (${(((to - from) / from) * 100).toFixed(1)}%, tolerance ${limit.toFixed(1)} MB) ${ok ? 'ok' : 'GROWING'}`,
    );
    return ok;
  };
  console.log(
    `start: rss ${samples[0]!.rss.toFixed(1)} MB, heapUsed ${samples[0]!.heapUsed.toFixed(1)} MB; end: rss ${samples.at(-1)!.rss.toFixed(1)} MB, heapUsed ${samples.at(-1)!.heapUsed.toFixed(1)} MB, external ${samples.at(-1)!.external.toFixed(1)} MB`,
  );
  const heapOk = judge('heapUsed', 0.1, 8);
  const rssOk = judge('rss', 0.05, 16);
  console.log(`shutdown exit code ${exitCode}`);
  const pass = errorCount === 0 && usage.used === accepted && heapOk && rssOk && exitCode === 0;
  console.log(pass ? 'PASS' : 'FAIL');
  if (!pass && output.trim()) console.log(`service output:\n${output.slice(-4000)}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(pass ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
