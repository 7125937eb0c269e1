/**
 * Soak: the real service as a child process under a steady, moderate, mixed workload.
 *   SOAK_SECONDS (default 600)  SOAK_RATE requests per second (default 200)
 * Prints errors, RSS samples (every 10 s), RSS growth after warm-up, stored vs accepted
 * counts, and PASS/FAIL (exit code 1 on FAIL). Run with `npm run soak`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEvent } from './workload.js';
import { freePort } from './lib.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 200);
const SAMPLE_MS = 10_000;
const ADMIN = 'soak-admin-token-0123456789';

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-soak-'));
  const plans = join(dir, 'plans.json');
  const high = { rpm: 100_000_000, eps: 100_000_000 };
  writeFileSync(plans, JSON.stringify({ plans: { starter: high, pro: high, business: high } }));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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

  const samples: { t: number; rss: number }[] = [{ t: 0, rss: rssMb(child.pid as number) }];
  const started = performance.now();
  const inflight = new Set<Promise<void>>();
  let i = 0;
  let nextSample = SAMPLE_MS;
  // Steady open-loop rate: every 50 ms, the requests due by now (bounded in flight).
  while (performance.now() - started < SECONDS * 1000) {
    const elapsed = performance.now() - started;
    const due = Math.floor((elapsed / 1000) * RATE);
    while (i < due && inflight.size < 256) {
      const p = one(i++).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    if (elapsed >= nextSample) {
      samples.push({ t: Math.round(elapsed / 1000), rss: rssMb(child.pid as number) });
      console.log(
        `t=${samples.at(-1)?.t}s rss=${samples.at(-1)?.rss.toFixed(1)} MB sent=${sent} accepted=${accepted} errors=${[...errors.values()].reduce((a, b) => a + b, 0)}`,
      );
      nextSample += SAMPLE_MS;
    }
    await sleep(50);
  }
  await Promise.all(inflight);
  samples.push({ t: Math.round((performance.now() - started) / 1000), rss: rssMb(child.pid as number) });

  const usage = (await (await fetch(`${base}/v1/usage`, { headers })).json()) as { used: number };
  child.kill('SIGTERM');
  const exitCode = await new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

  // Warm-up: the first fifth of the run (at least the first sample after start).
  const warmIndex = Math.max(1, Math.floor(samples.length / 5));
  const warm = samples[warmIndex] ?? samples[0]!;
  const last = samples.at(-1)!;
  const growth = last.rss - warm.rss;
  const growthLimit = Math.max(30, warm.rss * 0.15);
  const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
  console.log(
    `\nsoak: ${SECONDS} s at ${RATE} req/s: ${sent} requests (${reads} reads), ${accepted} events accepted (202), errors ${errorCount}${errorCount ? ` ${JSON.stringify(Object.fromEntries(errors))}` : ''}`,
  );
  console.log(`stored (GET /v1/usage used): ${usage.used}; accepted: ${accepted}; ${usage.used === accepted ? 'equal' : 'DIFFERENT'}`);
  console.log(
    `RSS: start ${samples[0]!.rss.toFixed(1)} MB, after warm-up (t=${warm.t}s) ${warm.rss.toFixed(1)} MB, end ${last.rss.toFixed(1)} MB, growth after warm-up ${growth.toFixed(1)} MB (limit ${growthLimit.toFixed(1)} MB)`,
  );
  console.log(`shutdown exit code ${exitCode}`);
  const pass = errorCount === 0 && usage.used === accepted && growth <= growthLimit && exitCode === 0;
  console.log(pass ? 'PASS' : 'FAIL');
  if (!pass && output.trim()) console.log(`service output:\n${output.slice(-4000)}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(pass ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
