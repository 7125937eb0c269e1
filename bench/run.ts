/**
 * End-to-end benchmark: starts the bare Fastify baseline and Vigil (embedded mode) as child
 * processes and drives both with autocannon in the same run, so figures are ratios against a
 * baseline measured on the same noisy machine. Latency at half the maximum rate comes from a
 * steady open-loop client (bench/paced.ts), against Vigil and against the bare route at that rate.
 * CPU per event is split by thread: the request thread, the SQLite writer thread, and the rest
 * (V8's GC and compiler helpers, libuv's pool).
 *   npm run bench                 all scenarios, 10 s each, on a database holding 1M events
 *   BENCH_SECONDS=5 npm run bench
 *   BENCH_PREFILL=100000 (default 1000000; 0 starts empty): events already stored when the run
 *                  starts (at least that many: the fill runs in steps of 2 s of load). The filled database is built once per schema and size, kept in
 *                  $TMPDIR/vigil-bench-prefill/, and copied for each run; for a new schema, a copy
 *                  of one filled under an earlier schema is migrated instead of filling anew.
 *   BENCH_WARMUP_SECONDS=3 (default): unmeasured load before each server's first run of a route
 *   BENCH_ROUNDS=3 (default): throughput scenarios run this many times, alternating servers; the
 *                  summary shows each figure's median over the rounds
 *   BENCH_BASELINE=/path/to/checkout: a second Vigil, run from that checkout's sources (its own
 *                  node_modules in place), measured in the same rounds as target `base`
 *   VIGIL_BENCH_NODE=/path/to/node: the servers run on that Node (its better-sqlite3 binding in
 *                  place: `.ci/with-node` swaps it), the load generator on the Node running this script
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { copyOfKept, keptDatabase, stopServer } from './prefill.js';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCH_PLANS, bodies, drive, drivePaced, freePort, keyFor, serverNodeVersion, start, startNode, vigilEnv, type Row, type Server } from './lib.js';

const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PREFILL = Number(process.env.BENCH_PREFILL ?? 1_000_000);

/** A Vigil checkout to benchmark: this one, or BENCH_BASELINE. */
interface Checkout {
  readonly target: string;
  readonly dir: string;
}

function startVigil(checkout: Checkout, port: number, plansFile: string, dataDir: string): Promise<Server> {
  return startNode(['--import', 'tsx', 'src/main.ts'], vigilEnv(port, plansFile, { VIGIL_DATA_DIR: dataDir }), port, { cwd: checkout.dir });
}

/**
 * A data directory holding PREFILL events of the workload in the account of the returned key (a
 * copy of the kept database for the checkout's schema), or an empty one.
 */
async function prefilled(checkout: Checkout, plansFile: string): Promise<{ dataDir: string; key?: string }> {
  if (PREFILL <= 0) return { dataDir: mkdtempSync(join(tmpdir(), 'vigil-bench-')) };
  const template = await keptDatabase(checkout.dir, PREFILL, plansFile, (dir, port, plans, dataDir) => startVigil({ ...checkout, dir }, port, plans, dataDir));
  return copyOfKept(template, 'vigil-bench-');
}

async function main(): Promise<void> {
  console.log(`servers on Node ${serverNodeVersion()}, load generator on Node ${process.version}, ${PREFILL} events stored before the run`);
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  const plansFile = join(dir, 'plans.json');
  writeFileSync(plansFile, BENCH_PLANS);
  const barePort = await freePort();
  const bare = await start(['bench/bare-server.ts'], { PORT: String(barePort) }, barePort);
  const checkouts: Checkout[] = [{ target: 'vigil', dir: process.cwd() }];
  if (process.env.BENCH_BASELINE) checkouts.unshift({ target: 'base', dir: resolve(process.env.BENCH_BASELINE) });
  const vigils: { checkout: Checkout; server: Server; auth: Record<string, string>; dataDir: string }[] = [];
  for (const checkout of checkouts) {
    const { dataDir, key: storedKey } = await prefilled(checkout, plansFile);
    const port = await freePort();
    const server = await startVigil(checkout, port, plansFile, dataDir);
    const key = storedKey ?? (await keyFor(port, 'bench'));
    vigils.push({ checkout, server, auth: { authorization: `Bearer ${key}` }, dataDir });
  }
  const auth = (vigils[vigils.length - 1] as (typeof vigils)[number]).auth;

  const single = bodies(5000, 1);
  const batch = bodies(200, 100);
  const measured: Row[] = [];
  // Unmeasured warm-up of each route on each server: a cold process spends its first seconds
  // compiling (V8's optimizing compiler runs on its own threads), which is not the steady state.
  const warm = (server: Server, path: string, payloads: string[], batchSize: number, headers: Record<string, string>) =>
    drive('warm-up', path, [server], path, payloads, batchSize, headers, undefined, WARMUP_SECONDS);
  await warm(bare, '/v1/events', single, 1, auth);
  for (const v of vigils) await warm(v.server, '/v1/events', single, 1, v.auth);
  await warm(bare, '/v1/events/batch', batch, 100, auth);
  for (const v of vigils) await warm(v.server, '/v1/events/batch', batch, 100, v.auth);
  // Rounds alternate the servers, so a slow spell of the host falls on all; the medians count.
  // The order of the Vigil checkouts flips each round, so neither always follows the bare route.
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? vigils : [...vigils].reverse();
    for (const [scenario, path, payloads, size] of [
      ['single', '/v1/events', single, 1],
      ['batch100', '/v1/events/batch', batch, 100],
    ] as const) {
      measured.push(await drive('bare', scenario, [bare], path, payloads, size, auth));
      for (const v of order) {
        measured.push(await drive(v.checkout.target, scenario, [v.server], path, payloads, size, v.auth));
      }
    }
  }
  if (ROUNDS > 1) console.table(measured);
  // Each figure's median over the rounds, field by field: CPU per event and rates swing apart.
  const medianOf = (target: string, scenario: string): Row => {
    const runs = measured.filter((r) => r.target === target && r.scenario === scenario);
    const median = (field: keyof Row) => {
      const values = runs.map((r) => Number(r[field])).sort((a, b) => a - b);
      return values[Math.floor(values.length / 2)] ?? 0;
    };
    const row: Row = {
      scenario,
      target,
      reqPerSec: 0,
      eventsPerSec: 0,
      p50: 0,
      p99: 0,
      p999: 0,
      non2xx: 0,
      rssMb: 0,
      cpuUsPerEvent: 0,
      requestUs: 0,
      writerUs: 0,
      helpersUs: 0,
      requestGcUs: 0,
      loadGenUsPerRequest: 0,
    };
    for (const field of [
      'reqPerSec',
      'eventsPerSec',
      'p50',
      'p99',
      'p999',
      'non2xx',
      'rssMb',
      'cpuUsPerEvent',
      'requestUs',
      'writerUs',
      'helpersUs',
      'requestGcUs',
      'loadGenUsPerRequest',
    ] as const)
      row[field] = median(field);
    return row;
  };
  const targets = ['bare', ...vigils.map((v) => v.checkout.target)];
  const rows: Row[] = ['single', 'batch100'].flatMap((scenario) => targets.map((target) => medianOf(target, scenario)));
  // The latency at half the maximum rate is a steady-state figure: a steady open-loop rate
  // (bench/paced.ts says why not autocannon's rate mode), after an unmeasured warm-up, since the
  // batch scenario leaves queued batches behind. The same rate against the bare route shows what
  // the client and loopback add by themselves.
  const max = medianOf('vigil', 'single').reqPerSec;
  const half = Math.max(1, Math.round(max / 2));
  for (const v of vigils) {
    await drivePaced('warm-up', 'half', v.server, '/v1/events', single, v.auth, half, WARMUP_SECONDS);
    rows.push(await drivePaced(v.checkout.target, 'single@half-max', v.server, '/v1/events', single, v.auth, half));
  }
  rows.push(await drivePaced('bare', 'single@half-max', bare, '/v1/events', single, auth, half));

  // 429 flood: a free-plan key hammered far above its limit.
  const own = vigils[vigils.length - 1] as (typeof vigils)[number];
  const freeKey = await keyFor(own.server.port, 'free');
  rows.push(await drive('vigil', 'flood-429', [own.server], '/v1/events', single, 1, { authorization: `Bearer ${freeKey}` }));

  console.table(rows);
  const field = (target: string, scenario: string, name: keyof Row) => Number(rows.find((r) => r.target === target && r.scenario === scenario)?.[name] ?? 0);
  const ratio = (target: string, scenario: string, name: keyof Row) => {
    const b = field('bare', scenario, name);
    return b > 0 ? (field(target, scenario, name) / b).toFixed(2) : 'n/a';
  };
  for (const { checkout } of vigils) {
    const t = checkout.target;
    console.log(`${t}: single req/s ${ratio(t, 'single', 'reqPerSec')} of bare; batch100 events/s ${ratio(t, 'batch100', 'eventsPerSec')} of bare`);
    // The server and the load generator share the machine's cores: with every core busy, the
    // single-event rate cannot pass cores × 1 s ÷ (all of the server's CPU + the load generator's) per request.
    const cores = availableParallelism();
    const client = field(t, 'single', 'loadGenUsPerRequest');
    const ceiling = Math.round((cores * 1e6) / Math.max(1, field(t, 'single', 'cpuUsPerEvent') + client));
    const bareRate = Math.max(1, field('bare', 'single', 'reqPerSec'));
    console.log(
      `${t}: single: the load generator ${client} µs/request (${field('bare', 'single', 'loadGenUsPerRequest')} against bare); ` +
        `${cores} cores carry at most ${ceiling} req/s (${(ceiling / bareRate).toFixed(2)} of bare)`,
    );
    console.log(
      `${t}: p99 at half the max rate (steady, open loop) ${field(t, 'single@half-max', 'p99')} ms, bare ${field('bare', 'single@half-max', 'p99')} ms; ` +
        `the service's own p99 (its request-duration histogram) at most ${field(t, 'single@half-max', 'serviceP99')} ms`,
    );
    // Rates depend on what else the machine runs; CPU per event much less so.
    for (const scenario of ['single', 'batch100']) {
      const us = (name: keyof Row) => field(t, scenario, name);
      const gcShare = (100 * (us('requestGcUs') + us('helpersUs'))) / Math.max(1, us('cpuUsPerEvent'));
      console.log(
        `${t}: ${scenario} CPU µs/event ${us('cpuUsPerEvent')} (request ${us('requestUs')}, of it GC ${us('requestGcUs')}; writer ${us('writerUs')}; helpers ${us('helpersUs')}); ` +
          `GC about ${gcShare.toFixed(0)}% (the request thread's collections and the helper threads); bare ${field('bare', scenario, 'cpuUsPerEvent')}`,
      );
    }
  }
  await stopServer(bare);
  for (const v of vigils) {
    await stopServer(v.server);
    // The database grows by about 1 KB per accepted event: gigabytes per run.
    rmSync(v.dataDir, { recursive: true, force: true });
  }
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
