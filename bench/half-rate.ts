/**
 * Latency at a steady rate, before/after: single events from the steady open-loop client
 * (bench/paced.ts) against the built service (`dist/src/main.js`, flags of `npm start`) of two or
 * more checkouts and the bare Fastify route, in alternating rounds, each Vigil run on its own copy
 * of the database `npm run bench` keeps (BENCH_PREFILL events, built here if missing) or on an
 * empty one. Prints every run and the medians: p50/p99/p99.9 (and the bucket of the service's own
 * request-duration histogram that holds its p99) and CPU per event by thread.
 *
 *   AB=/path/to/before,/path/to/after npx tsx bench/half-rate.ts
 *   RATE=2000 (requests/s; default: half the first checkout's maximum, measured with autocannon)
 *   BENCH_PREFILL=1000000 (0: an empty database)  ROUNDS=3  SECS=12
 *
 * Build each checkout first (`npm run build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { copyOfKept, keptDatabase, stopServer } from './prefill.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCH_PLANS, bodies, drive, drivePaced, freePort, keyFor, majorGcOf, start, startNode, vigilEnv, type Row, type Server } from './lib.js';

const specs = (process.env.AB ?? '')
  .split(',')
  .filter(Boolean)
  .map((dir) => resolve(dir));
if (specs.length < 1) throw new Error('AB must name one or more checkouts, comma-separated');
const PREFILL = Number(process.env.BENCH_PREFILL ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECS = Number(process.env.SECS ?? 12);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);

function startVigil(dir: string, port: number, plansFile: string, dataDir: string): Promise<Server> {
  return startNode([join(dir, 'dist/src/main.js')], vigilEnv(port, plansFile, { VIGIL_DATA_DIR: dataDir }), port, { cwd: dir });
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'vigil-half-'));
  const plansFile = join(work, 'plans.json');
  writeFileSync(plansFile, BENCH_PLANS);
  const kept = PREFILL > 0 ? await keptDatabase(specs[0] as string, PREFILL, plansFile, startVigil) : undefined;
  const single = bodies(5000, 1);
  const barePort = await freePort();
  const bare = await start(['bench/bare-server.ts'], { PORT: String(barePort) }, barePort);

  /** A Vigil of `dir` on a fresh copy of the kept database (or an empty one), warmed up. */
  const vigilOf = async (dir: string) => {
    const copy = kept === undefined ? undefined : copyOfKept(kept, 'vigil-half-');
    const dataDir = copy?.dataDir ?? mkdtempSync(join(tmpdir(), 'vigil-half-'));
    const port = await freePort();
    const server = await startVigil(dir, port, plansFile, dataDir);
    const key = copy?.key ?? (await keyFor(port, 'bench'));
    return { server, auth: { authorization: `Bearer ${key}` }, dataDir };
  };

  let rate = Number(process.env.RATE ?? 0);
  if (rate <= 0) {
    const v = await vigilOf(specs[0] as string);
    await drive('warm-up', 'single', [v.server], '/v1/events', single, 1, v.auth, undefined, WARMUP);
    rate = Math.round((await drive('max', 'single', [v.server], '/v1/events', single, 1, v.auth)).reqPerSec / 2);
    await stopServer(v.server);
    rmSync(v.dataDir, { recursive: true, force: true });
  }
  console.log(`${PREFILL} events stored, ${rate} requests/s, ${SECS} s per run`);
  await drivePaced('warm-up', 'half', bare, '/v1/events', single, {}, rate, WARMUP);

  // Major collections during each measured run: the latency tail at a steady rate follows them.
  const rows: (Row & { majorGcs?: number; majorGcMs?: number })[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const dir of round % 2 === 0 ? specs : [...specs].reverse()) {
      const v = await vigilOf(dir);
      await drivePaced('warm-up', 'half', v.server, '/v1/events', single, v.auth, rate, WARMUP);
      const from = new Date().toISOString().slice(11, 19);
      const gcBefore = await majorGcOf(v.server);
      const paced = await drivePaced(dir, 'paced', v.server, '/v1/events', single, v.auth, rate, SECS);
      const gcAfter = await majorGcOf(v.server);
      const row = { ...paced, majorGcs: gcAfter.count - gcBefore.count, majorGcMs: Math.round(gcAfter.ms - gcBefore.ms) };
      await stopServer(v.server);
      rmSync(v.dataDir, { recursive: true, force: true });
      rows.push(row);
      console.log(`measured from ${from} UTC:`, JSON.stringify(row));
    }
    const row = await drivePaced('bare', 'paced', bare, '/v1/events', single, {}, rate, SECS);
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  console.table(
    [...specs, 'bare'].map((target) => {
      const list = rows.filter((r) => r.target === target);
      return {
        target,
        'req/s': median(list.map((r) => r.reqPerSec)),
        p50: median(list.map((r) => r.p50)),
        p99: median(list.map((r) => r.p99)),
        'p99.9': median(list.map((r) => r.p999)),
        // The bucket bound the service's own p99 falls under: what the client adds shows beside it.
        'service p99 ≤': target === 'bare' ? '' : median(list.map((r) => r.serviceP99 ?? 0)),
        non2xx: median(list.map((r) => r.non2xx)),
        'µs/event': median(list.map((r) => r.cpuUsPerEvent)),
        request: median(list.map((r) => r.requestUs)),
        writer: median(list.map((r) => r.writerUs)),
        helpers: median(list.map((r) => r.helpersUs)),
        'major GCs': target === 'bare' ? '' : median(list.map((r) => r.majorGcs ?? 0)),
        'major GC ms': target === 'bare' ? '' : median(list.map((r) => r.majorGcMs ?? 0)),
      };
    }),
  );
  await stopServer(bare);
  rmSync(work, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
