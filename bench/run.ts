/**
 * End-to-end benchmark: starts the bare Fastify baseline and Vigil (embedded mode) as child
 * processes and drives both with autocannon in the same run, so figures are ratios against a
 * baseline measured on the same noisy machine. Latency at half the maximum rate comes from a
 * steady open-loop client (bench/paced.ts), against Vigil and against the bare route at that rate.
 *   npm run bench                 all scenarios, 10 s each
 *   BENCH_SECONDS=5 npm run bench
 *   BENCH_WARMUP_SECONDS=3 (default): unmeasured load before each server's first run of a route
 *   BENCH_ROUNDS=3 (default): throughput scenarios run this many times, alternating servers; the
 *                  table shows each scenario's median round (by events/s)
 *   VIGIL_BENCH_NODE=/path/to/node: both servers run on that Node (its better-sqlite3 binding in
 *                  place: `.ci/with-node` swaps it), the load generator on the Node running this script
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_PLANS, bodies, drive, drivePaced, freePort, keyFor, serverNodeVersion, start, vigilEnv, type Row } from './lib.js';

const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function main(): Promise<void> {
  console.log(`servers on Node ${serverNodeVersion()}, load generator on Node ${process.version}`);
  const dir = mkdtempSync(join(tmpdir(), 'vigil-bench-'));
  const plansFile = join(dir, 'plans.json');
  writeFileSync(plansFile, BENCH_PLANS);
  const barePort = await freePort();
  const bare = await start(['bench/bare-server.ts'], { PORT: String(barePort) }, barePort);
  const port = await freePort();
  const vigil = await start(['src/main.ts'], vigilEnv(port, plansFile, { VIGIL_DATA_DIR: dir }), port);
  const key = await keyFor(port, 'bench');
  const auth = { authorization: `Bearer ${key}` };

  const single = bodies(5000, 1);
  const batch = bodies(200, 100);
  const measured: Row[] = [];
  // Unmeasured warm-up of each route on each server: a cold process spends its first seconds
  // compiling (V8's optimizing compiler runs on its own threads), which is not the steady state.
  const warm = (server: typeof bare, path: string, payloads: string[], batchSize: number) =>
    drive('warm-up', path, [server], path, payloads, batchSize, auth, undefined, WARMUP_SECONDS);
  await warm(bare, '/v1/events', single, 1);
  await warm(vigil, '/v1/events', single, 1);
  await warm(bare, '/v1/events/batch', batch, 100);
  await warm(vigil, '/v1/events/batch', batch, 100);
  // Rounds alternate the servers, so a slow spell of the host falls on both; the medians count.
  for (let round = 0; round < ROUNDS; round++) {
    measured.push(await drive('bare', 'single', [bare], '/v1/events', single, 1, auth));
    measured.push(await drive('vigil', 'single', [vigil], '/v1/events', single, 1, auth));
    measured.push(await drive('bare', 'batch100', [bare], '/v1/events/batch', batch, 100, auth));
    measured.push(await drive('vigil', 'batch100', [vigil], '/v1/events/batch', batch, 100, auth));
    // Batches still queued when autocannon stops must not run into the next measurement.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  if (ROUNDS > 1) console.table(measured);
  const medianOf = (target: string, scenario: string): Row => {
    const runs = measured.filter((r) => r.target === target && r.scenario === scenario).sort((a, b) => a.eventsPerSec - b.eventsPerSec);
    return runs[Math.floor(runs.length / 2)] as Row;
  };
  const rows: Row[] = [medianOf('bare', 'single'), medianOf('vigil', 'single'), medianOf('bare', 'batch100'), medianOf('vigil', 'batch100')];
  const max = rows[1]?.reqPerSec ?? 0;
  // Unmeasured too: the batch scenario leaves queued batches behind, and the latency at half
  // the maximum rate is a steady-state figure.
  // A steady open-loop rate (bench/paced.ts says why not autocannon's rate mode).
  const half = Math.max(1, Math.round(max / 2));
  await drivePaced('warm-up', 'half', vigil, '/v1/events', single, auth, half, WARMUP_SECONDS);
  rows.push(await drivePaced('vigil', 'single@half-max', vigil, '/v1/events', single, auth, half));
  // The same steady rate against the bare route: what the client and loopback add by themselves.
  rows.push(await drivePaced('bare', 'single@half-max', bare, '/v1/events', single, auth, half));

  // 429 flood: a free-plan key hammered far above its limit.
  const freeKey = await keyFor(port, 'free');
  rows.push(await drive('vigil', 'flood-429', [vigil], '/v1/events', single, 1, { authorization: `Bearer ${freeKey}` }));

  console.table(rows);
  const ratio = (scenario: string, field: 'reqPerSec' | 'eventsPerSec' | 'cpuUsPerEvent') => {
    const b = rows.find((r) => r.target === 'bare' && r.scenario === scenario)?.[field] ?? 0;
    const v = rows.find((r) => r.target === 'vigil' && r.scenario === scenario)?.[field] ?? 0;
    return b > 0 ? (v / b).toFixed(2) : 'n/a';
  };
  console.log(`ratio vigil/bare single req/s:     ${ratio('single', 'reqPerSec')}`);
  console.log(`ratio vigil/bare batch100 events/s: ${ratio('batch100', 'eventsPerSec')}`);
  const halfMax = (target: string) => rows.find((r) => r.target === target && r.scenario === 'single@half-max');
  console.log(`p99 at half the max rate (steady, open loop): vigil ${halfMax('vigil')?.p99} ms, bare ${halfMax('bare')?.p99} ms at the same rate`);
  // Rates depend on what else the machine runs; CPU per event much less so.
  console.log(`ratio vigil/bare single CPU per event:   ${ratio('single', 'cpuUsPerEvent')}`);
  console.log(`ratio vigil/bare batch100 CPU per event: ${ratio('batch100', 'cpuUsPerEvent')}`);
  bare.child.kill('SIGTERM');
  vigil.child.kill('SIGTERM');
  await new Promise((resolve) => vigil.child.once('exit', resolve));
  // The database grows by about 1 KB per accepted event: gigabytes per run.
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
