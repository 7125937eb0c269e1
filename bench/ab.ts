/**
 * Before/after on a noisy host: starts the built service (`dist/src/main.js`, with the flags of
 * `npm start`) from one or more checkouts in turn (A B, B A, A B, …), each run on a fresh database,
 * drives each with the same load, and prints every run and the medians: CPU per event of the
 * request thread (and its own garbage collection), the SQLite writer thread, the helpers and all
 * threads (from /proc/<pid>/task/<tid>/stat), events/s, latency, and the major collections of each
 * measured run.
 *
 *   AB=/path/to/before,/path/to/after npx tsx bench/ab.ts
 *   PAIRS=3 (rounds)  SECS=6  SCEN=single|batch  WARMUP=3 (seconds of unmeasured load on each fresh
 *   service first; the heap keeps growing for tens of seconds, so a longer one measures the steady state)
 *   RATE=1000: a steady open-loop rate (bench/paced.ts) instead of the maximum; RATE=half: half of
 *   the first checkout's maximum, measured first. At a steady rate the bare Fastify route
 *   (bench/bare-server.ts) runs in every round too, and the service's own p99 (the bucket of its
 *   request-duration histogram that holds it) is printed beside the client's.
 *   BENCH_PREFILL=1000000: each run on a fresh copy of the database `npm run bench` keeps with that
 *   many events (built here if missing; default 0, an empty database).
 *   A checkout may carry environment for its service: /path@VIGIL_X=1@FLAGS=--some-node-flag
 *
 * The latency tail at half rate, as docs/internals/performance.md reports it:
 *   AB=. RATE=half SECS=12 PAIRS=3 BENCH_PREFILL=1000000 npx tsx bench/ab.ts
 *
 * Build each checkout first (`npm run build`; a worktree can link this one's node_modules).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCH_PLANS, bodies, drive, drivePaced, freePort, keyFor, majorGcOf, start, startNode, vigilEnv, type Row, type Server } from './lib.js';
import { copyOfKept, keptDatabase, stopServer } from './prefill.js';

const specs = (process.env.AB ?? '').split(',').filter(Boolean);
if (specs.length < 1) throw new Error('AB must name one or more checkouts, comma-separated');
const PAIRS = Number(process.env.PAIRS ?? 3);
const SECS = Number(process.env.SECS ?? 6);
const WARMUP = Number(process.env.WARMUP ?? 3);
const PREFILL = Number(process.env.BENCH_PREFILL ?? 0);
const batch = process.env.SCEN === 'batch';
const path = batch ? '/v1/events/batch' : '/v1/events';
const payloads = batch ? bodies(200, 100) : bodies(5000, 1);
const perBody = batch ? 100 : 1;

interface Checkout {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly flags: readonly string[];
}

const checkoutOf = (spec: string): Checkout => {
  const [dir = '.', ...settings] = spec.split('@');
  const { FLAGS, ...env } = Object.fromEntries(settings.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
  return { dir: resolve(dir), env, flags: FLAGS ? FLAGS.split(' ') : [] };
};

const work = mkdtempSync(join(tmpdir(), 'vigil-ab-'));
const plansFile = join(work, 'plans.json');
writeFileSync(plansFile, BENCH_PLANS);

function startVigil(checkout: Checkout, port: number, dataDir: string): Promise<Server> {
  return startNode(
    [...checkout.flags, join(checkout.dir, 'dist/src/main.js')],
    Object.assign(vigilEnv(port, plansFile, { VIGIL_DATA_DIR: dataDir }), checkout.env),
    port,
    {
      cwd: checkout.dir,
    },
  );
}

const kept =
  PREFILL > 0
    ? await keptDatabase(checkoutOf(specs[0] as string).dir, PREFILL, plansFile, (dir, port, _plans, dataDir) =>
        startVigil({ dir, env: {}, flags: [] }, port, dataDir),
      )
    : undefined;

/** A service of the checkout on a fresh database (a copy of the kept one, or empty), with a key. */
async function serviceOf(checkout: Checkout): Promise<{ server: Server; auth: Record<string, string>; dataDir: string }> {
  const copy = kept === undefined ? undefined : copyOfKept(kept, 'vigil-ab-');
  const dataDir = copy?.dataDir ?? mkdtempSync(join(tmpdir(), 'vigil-ab-'));
  const port = await freePort();
  const server = await startVigil(checkout, port, dataDir);
  return { server, auth: { authorization: `Bearer ${copy?.key ?? (await keyFor(port, 'bench'))}` }, dataDir };
}

let rate = process.env.RATE === 'half' ? -1 : Number(process.env.RATE ?? 0);
if (rate < 0) {
  const s = await serviceOf(checkoutOf(specs[0] as string));
  await drive('warm-up', 'max', [s.server], path, payloads, perBody, s.auth, undefined, WARMUP);
  rate = Math.round((await drive('max', 'max', [s.server], path, payloads, perBody, s.auth, undefined, SECS)).reqPerSec / 2);
  await stopServer(s.server);
  rmSync(s.dataDir, { recursive: true, force: true });
  console.log(`half the maximum: ${rate} requests/s`);
}

type Measured = Row & { majorGcs?: number; majorGcMs?: number };

async function once(spec: string): Promise<Measured> {
  const s = await serviceOf(checkoutOf(spec));
  try {
    if (rate > 0) await drivePaced('warm-up', 'paced', s.server, path, payloads, s.auth, rate, WARMUP);
    else await drive('warm-up', 'ab', [s.server], path, payloads, perBody, s.auth, undefined, WARMUP);
    const before = await majorGcOf(s.server);
    const row =
      rate > 0
        ? await drivePaced(spec, 'paced', s.server, path, payloads, s.auth, rate, SECS)
        : await drive(spec, 'max', [s.server], path, payloads, perBody, s.auth, undefined, SECS);
    const after = await majorGcOf(s.server);
    return Object.assign(row, { majorGcs: after.count - before.count, majorGcMs: Math.round(after.ms - before.ms) });
  } finally {
    await stopServer(s.server);
    rmSync(s.dataDir, { recursive: true, force: true });
  }
}

let bare: Server | undefined;
if (rate > 0) {
  const port = await freePort();
  bare = await start(['bench/bare-server.ts'], { PORT: String(port) }, port);
  await drivePaced('warm-up', 'paced', bare, path, payloads, {}, rate, WARMUP);
}

const rows: Measured[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  for (const spec of pair % 2 === 0 ? specs : [...specs].reverse()) {
    const run = await once(spec);
    rows.push(run);
    const { requestUs, requestGcUs, writerUs, helpersUs, cpuUsPerEvent, eventsPerSec, p50, p99, majorGcs } = run;
    console.log(spec, JSON.stringify({ requestUs, requestGcUs, writerUs, helpersUs, allUs: cpuUsPerEvent, eventsPerSec, p50, p99, majorGcs }));
  }
  if (bare) {
    const run = await drivePaced('bare', 'paced', bare, path, payloads, {}, rate, SECS);
    rows.push(run);
    console.log('bare', JSON.stringify({ p50: run.p50, p99: run.p99, allUs: run.cpuUsPerEvent }));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
console.log(`${PREFILL} events stored, ${rate > 0 ? `${rate} requests/s` : 'maximum rate'}, ${SECS} s per run, ${batch ? 'batches of 100' : 'single events'}`);
console.table(
  [...specs, ...(bare ? ['bare'] : [])].map((target) => {
    const list = rows.filter((r) => r.target === target);
    const service = target !== 'bare';
    return {
      target,
      'request thread µs/event': median(list.map((r) => r.requestUs)),
      'of it GC': median(list.map((r) => r.requestGcUs)),
      'writer µs/event': median(list.map((r) => r.writerUs)),
      'helpers µs/event': median(list.map((r) => r.helpersUs)),
      'all threads µs/event': median(list.map((r) => r.cpuUsPerEvent)),
      'events/s': median(list.map((r) => r.eventsPerSec)),
      p50: median(list.map((r) => r.p50)),
      p99: median(list.map((r) => r.p99)),
      'p99.9': median(list.map((r) => r.p999)),
      // The bucket bound the service's own p99 falls under: what the client adds shows beside it.
      'service p99 ≤': service && rate > 0 ? median(list.map((r) => r.serviceP99 ?? 0)) : '',
      'major GCs': service ? median(list.map((r) => r.majorGcs ?? 0)) : '',
      'major GC ms': service ? median(list.map((r) => r.majorGcMs ?? 0)) : '',
    };
  }),
);
if (bare) await stopServer(bare);
rmSync(work, { recursive: true, force: true });
