/**
 * Before/after on a noisy host: starts the built service (`dist/src/main.js`, with the flags of
 * `npm start`) from two or more checkouts in turn (A B, B A, A B, …), drives each with the same
 * load, and prints every run and the medians: CPU per event of the request thread, the SQLite
 * writer thread and all threads (from /proc/<pid>/task/<tid>/stat), events/s and latency.
 *
 *   AB=/path/to/before,/path/to/after npx tsx bench/ab.ts
 *   PAIRS=3 (default)  SECS=6  SCEN=single|batch  RATE=1000 (a steady open-loop rate instead of max)
 *   WARMUP=3 (default): seconds of unmeasured load on each fresh service first; the heap keeps
 *   growing for tens of seconds, so a longer one measures the steady state
 *   A checkout may carry environment for its service: /path@VIGIL_X=1@FLAGS=--some-node-flag
 *
 * Build each checkout first (`npm run build`; a worktree can link this one's node_modules).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_PLANS, bodies, drive, drivePaced, freePort, keyFor, startNode, vigilEnv, type Row } from './lib.js';

const specs = (process.env.AB ?? '').split(',').filter(Boolean);
if (specs.length < 2) throw new Error('AB must name two or more checkouts, comma-separated');
const PAIRS = Number(process.env.PAIRS ?? 3);
const SECS = Number(process.env.SECS ?? 6);
const RATE = Number(process.env.RATE ?? 0);
const WARMUP = Number(process.env.WARMUP ?? 3);
const batch = process.env.SCEN === 'batch';
const path = batch ? '/v1/events/batch' : '/v1/events';
const payloads = batch ? bodies(200, 100) : bodies(5000, 1);
const perBody = batch ? 100 : 1;

async function once(spec: string): Promise<Row> {
  const [dir = '.', ...settings] = spec.split('@');
  const extra = Object.fromEntries(settings.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
  const { FLAGS, ...env } = extra;
  const data = mkdtempSync(join(tmpdir(), 'vigil-ab-'));
  const plansFile = join(data, 'plans.json');
  writeFileSync(plansFile, BENCH_PLANS);
  const port = await freePort();
  const server = await startNode(
    [...(FLAGS ? FLAGS.split(' ') : []), join(dir, 'dist/src/main.js')],
    { ...vigilEnv(port, plansFile, { VIGIL_DATA_DIR: data }), ...env },
    port,
    { cwd: dir },
  );
  const { child } = server;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const auth = { authorization: `Bearer ${await keyFor(port, 'bench')}` };
    await drive('warm-up', 'ab', [server], path, payloads, perBody, auth, undefined, WARMUP);
    return RATE > 0
      ? await drivePaced(spec, 'paced', server, path, payloads, auth, RATE, SECS)
      : await drive(spec, 'max', [server], path, payloads, perBody, auth, undefined, SECS);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(data, { recursive: true, force: true });
  }
}

const runs = new Map<string, Row[]>(specs.map((s) => [s, []]));
for (let pair = 0; pair < PAIRS; pair++) {
  for (const spec of pair % 2 === 0 ? specs : [...specs].reverse()) {
    const run = await once(spec);
    runs.get(spec)?.push(run);
    const { requestUs, requestGcUs, writerUs, helpersUs, cpuUsPerEvent, eventsPerSec, p50, p99 } = run;
    console.log(spec, JSON.stringify({ requestUs, requestGcUs, writerUs, helpersUs, allUs: cpuUsPerEvent, eventsPerSec, p50, p99 }));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
console.table(
  specs.map((spec) => {
    const list = runs.get(spec) ?? [];
    return {
      checkout: spec,
      'request thread µs/event': median(list.map((r) => r.requestUs)),
      'of it GC': median(list.map((r) => r.requestGcUs)),
      'writer thread µs/event': median(list.map((r) => r.writerUs)),
      'helpers µs/event': median(list.map((r) => r.helpersUs)),
      'all threads µs/event': median(list.map((r) => r.cpuUsPerEvent)),
      'events/s': median(list.map((r) => r.eventsPerSec)),
      p50: median(list.map((r) => r.p50)),
      p99: median(list.map((r) => r.p99)),
    };
  }),
);
