/**
 * Overload: what a service answers at twice its capacity, with admission control (the shipped
 * settings, or those given) and without it (no bound on the wait for admission).
 *
 *   npx tsx bench/overload.ts                                   # embedded, one instance
 *   npx tsx bench/overload.ts --mode scaleout --instances 2     # PostgreSQL + Redis, the load split between instances
 *   npx tsx bench/overload.ts --mode scaleout --instances 4 --balancer   # the load through HAProxy (leastconn)
 *
 * For each variant a fresh service (or fleet) is started; its capacity is its closed-loop maximum
 * rate of single events (autocannon, BENCH_CONNECTIONS connections, CAPACITY_SECONDS); then an
 * open-loop load of OVERLOAD_FACTOR (2) times the capacity measured in the first variant is
 * offered for BENCH_SECONDS (20) over OVERLOAD_CONNECTIONS (8000) keep-alive sockets per
 * instance, all opened before the run, each request due at its time and timed from it
 * (bench/paced.ts). The sockets are as many as the offered rate times the latency the accepted
 * requests may reach, so that the load generator does not queue requests itself: with fewer, a
 * request due finds every socket busy and waits in the generator, where no bound of the service
 * sees it, and the service, answering the sockets it has in a fraction of a second, is not
 * overloaded by its own measure. Printed per variant: offered and accepted
 * rates (accepted over the whole run, to the last answer), p50/p99 of the accepted (202) answers,
 * how many 503 OVERLOADED answers and their p99, how late the generator itself sent (p99), other
 * answers, and server CPU µs per accepted event (every thread of every instance, from idle to
 * idle, so the refusals' cost is in it).
 * Settings with admission: OVERLOAD_MAX_WAIT_MS and OVERLOAD_MAX_WAITING (VIGIL_INGEST_MAX_WAIT_MS,
 * VIGIL_INGEST_MAX_WAITING; the shipped defaults when unset).
 * OVERLOAD_VICTIM_RATE=N: a second account sends N single events a second beside the flood, and
 * its accepted and refused counts and p50/p99 are printed. OVERLOAD_ONLY=1 or 2: one variant.
 * OVERLOAD_TRACE=1: each instance's admission every second. OVERLOAD_SERVICE: another build to
 * run (default dist/src/main.js), e.g. an older checkout's, for a comparison.
 * PostgreSQL: VIGIL_BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/test; a fresh
 * schema per variant, dropped afterwards). Redis: VIGIL_BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379; a fresh key prefix, deleted afterwards).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { deleteKeysWithPrefix } from '../test/helpers/redis-keys.js';
import { until } from '../test/helpers/until.js';
import { BENCH_PLANS, bodies, cpuPerEvent, drive, freePort, idle, keyFor, metricsTextOf, startNode, threadCpuOf, vigilEnv, type Server } from './lib.js';
import { SHEDDING_LIMITS, startHaproxy, type Balancer } from './fleet/haproxy.js';
import { pacedLoad, type PacedResult } from './paced.js';

const PG_URL = process.env.VIGIL_BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS_URL = process.env.VIGIL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const FACTOR = Number(process.env.OVERLOAD_FACTOR ?? 2);
const OPEN_CONNECTIONS = Number(process.env.OVERLOAD_CONNECTIONS ?? 8000);
const CAPACITY_SECONDS = Number(process.env.CAPACITY_SECONDS ?? 10);
const OVERLOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const TRACE = process.env.OVERLOAD_TRACE === '1';
// OVERLOAD_VICTIM_RATE=20: a second account sends this many single events a second beside the flood.
const VICTIM_RATE = Number(process.env.OVERLOAD_VICTIM_RATE ?? 0);
// OVERLOAD_SERVICE: the built service to run (default dist/src/main.js), e.g. another checkout's, to compare.
const SERVICE = process.env.OVERLOAD_SERVICE ?? 'dist/src/main.js';

const { values: args } = parseArgs({
  options: { mode: { type: 'string', default: 'embedded' }, instances: { type: 'string', default: '1' }, balancer: { type: 'boolean', default: false } },
});
const MODE = args.mode === 'scaleout' ? 'scaleout' : 'embedded';
const INSTANCES = MODE === 'scaleout' ? Math.max(1, Number(args.instances)) : 1;
// Scaled out, the offered load may go through HAProxy (leastconn) instead of to each instance in turn.
const BALANCER = MODE === 'scaleout' && args.balancer === true;

interface Variant {
  readonly name: string;
  readonly env: Record<string, string>;
}

const ALL_VARIANTS: readonly Variant[] = [
  {
    name: 'admission control',
    env: {
      ...(process.env.OVERLOAD_MAX_WAIT_MS === undefined ? {} : { VIGIL_INGEST_MAX_WAIT_MS: process.env.OVERLOAD_MAX_WAIT_MS }),
      ...(process.env.OVERLOAD_MAX_WAITING === undefined ? {} : { VIGIL_INGEST_MAX_WAITING: process.env.OVERLOAD_MAX_WAITING }),
    },
  },
  { name: 'no admission control', env: { VIGIL_INGEST_MAX_WAIT_MS: '0', VIGIL_INGEST_MAX_WAITING: '1000000' } },
];
// OVERLOAD_ONLY=1 (or 2): only the first (or second) variant, offered twice its own capacity.
const ONLY = Number(process.env.OVERLOAD_ONLY ?? 0);
const VARIANTS = ONLY === 1 || ONLY === 2 ? ALL_VARIANTS.slice(ONLY - 1, ONLY) : ALL_VARIANTS;

/** The URL with `search_path` set to `schema` for every connection. */
function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Starts the instances of one variant on fresh storage; `stop` ends them and drops what they stored. */
async function startFleet(variant: Variant): Promise<{ servers: Server[]; balancer?: Balancer; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-overload-'));
  const plansFile = join(dir, 'plans.json');
  writeFileSync(plansFile, BENCH_PLANS);
  // The open-loop client holds OPEN_CONNECTIONS sockets from one address.
  const common = { VIGIL_DATA_DIR: dir, VIGIL_MAX_CONNECTIONS_PER_IP: String(OPEN_CONNECTIONS * 2), VIGIL_LOG_LEVEL: 'warn', ...variant.env };
  const servers: Server[] = [];
  if (MODE === 'embedded') {
    const port = await freePort();
    servers.push(await startNode([SERVICE], vigilEnv(port, plansFile, common), port));
    return { servers, stop: async () => void servers.forEach((s) => s.child.kill('SIGTERM')) };
  }
  const schema = `vigil_overload_${randomBytes(4).toString('hex')}`;
  const prefix = `vigil-bench:${schema}:`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  await admin.query(`create schema "${schema}"`);
  const env = (port: number) =>
    vigilEnv(port, plansFile, { ...common, VIGIL_DATABASE_URL: withSchema(PG_URL, schema), VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: prefix });
  // One after the other: the first runs the migrations, and a listening port is not handed out again.
  for (let i = 0; i < INSTANCES; i++) {
    const port = await freePort();
    servers.push(await startNode([SERVICE], env(port), port));
  }
  const balancer = BALANCER
    ? startHaproxy(
        dir,
        await freePort(),
        servers.map((s) => s.port),
        SHEDDING_LIMITS,
      )
    : undefined;
  if (balancer !== undefined)
    await until(
      () =>
        fetch(`http://127.0.0.1:${balancer.port}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      'HAProxy ready',
    );
  return {
    servers,
    ...(balancer === undefined ? {} : { balancer }),
    async stop() {
      balancer?.process.kill('SIGTERM');
      servers.forEach((s) => s.child.kill('SIGTERM'));
      await Promise.all(servers.map((s) => new Promise((resolve) => (s.child.exitCode === null ? s.child.once('exit', resolve) : resolve(undefined)))));
      await admin.query(`drop schema if exists "${schema}" cascade`).finally(() => admin.end());
      const redis = new Redis(REDIS_URL);
      await deleteKeysWithPrefix(redis, prefix);
      redis.disconnect();
    },
  };
}

/**
 * Prints each instance's admission every second while the load runs (OVERLOAD_TRACE=1): the
 * requests in flight and waiting, and the requests refused since the last line. The line is read from /metrics, so it also shows how late an overloaded instance answers.
 */
function traceAdmission(servers: readonly Server[]): { stop(): void } {
  const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const refusedBefore = new Map<number, number>();
  const started = performance.now();
  const timer = setInterval(() => {
    for (const server of servers)
      void metricsTextOf(server).then((text) => {
        if (text === undefined) return;
        const refused = ['waiting_full', 'account_share', 'wait_too_long']
          .map((reason) => value(text, `vigil_admission_rejected_total{reason="${reason}"}`))
          .reduce((a, b) => a + (Number.isNaN(b) ? 0 : b), 0);
        const since = refused - (refusedBefore.get(server.port) ?? 0);
        refusedBefore.set(server.port, refused);
        const at = ((performance.now() - started) / 1000).toFixed(1);
        console.log(
          `  ${at}s :${server.port} in flight ${value(text, 'vigil_ingest_admission_in_flight')} waiting ${value(text, 'vigil_ingest_admission_waiting')} refused +${since}`,
        );
      });
  }, 1_000);
  return { stop: () => clearInterval(timer) };
}

interface Result {
  readonly variant: string;
  readonly capacityPerSec: number;
  readonly offeredPerSec: number;
  readonly acceptedPerSec: number;
  readonly acceptedP50Ms: number;
  readonly acceptedP99Ms: number;
  readonly overloaded: number;
  readonly overloadedP99Ms: number;
  /** How late the load generator sent requests, p99 (ms): part of every latency here. */
  readonly sendLagP99Ms: number;
  /** With OVERLOAD_VICTIM_RATE: the other account's single events accepted and refused, and the accepted ones' p50/p99 (ms). */
  readonly victimAccepted?: number;
  readonly victimRefused?: number;
  readonly victimP50Ms?: number;
  readonly victimP99Ms?: number;
  readonly other: number;
  readonly cpuUsPerAccepted: number;
  /** The machine's one-minute load average after the run: the figures of a run on a busy machine are not comparable with a quiet one's. */
  readonly loadAverage: number;
}

async function run(variant: Variant, offered: number | undefined): Promise<Result> {
  const fleet = await startFleet(variant);
  try {
    const servers = fleet.servers;
    const first = servers[0] as Server;
    const auth = { authorization: `Bearer ${await keyFor(first.port, 'bench')}` };
    const single = bodies(20_000, 1);
    await drive(MODE, 'warm-up', servers, '/v1/events', single, 1, auth, undefined, 3);
    const capacity = (await drive(MODE, 'capacity', servers, '/v1/events', single, 1, auth, undefined, CAPACITY_SECONDS)).eventsPerSec;
    const rate = offered ?? Math.round(capacity * FACTOR);
    const pids = servers.map((s) => s.child.pid as number);
    await Promise.all(pids.map(idle));
    const before = await Promise.all(pids.map(threadCpuOf));
    const trace = TRACE ? traceAdmission(servers) : undefined;
    // Another account sending single events at a steady low rate beside the flood: what a
    // customer that sends within its means sees while another overloads the instance.
    const victimKey = VICTIM_RATE > 0 ? { authorization: `Bearer ${await keyFor(first.port, 'bench')}` } : undefined;
    let victim: Promise<PacedResult> | undefined;
    const load = await pacedLoad({
      onStart: () => {
        if (victimKey === undefined) return;
        victim = pacedLoad({
          port: fleet.balancer?.port ?? first.port,
          path: '/v1/events',
          headers: victimKey,
          payloads: bodies(Math.round(VICTIM_RATE * OVERLOAD_SECONDS), 1, 5_000_000),
          rate: VICTIM_RATE,
          seconds: OVERLOAD_SECONDS,
          connections: 20,
          openFirst: '/healthz',
        });
      },
      port: fleet.balancer?.port ?? first.port,
      morePorts: fleet.balancer === undefined ? servers.slice(1).map((s) => s.port) : [],
      path: '/v1/events',
      headers: auth,
      payloads: bodies(Math.round(rate * OVERLOAD_SECONDS), 1, 20_000),
      rate,
      seconds: OVERLOAD_SECONDS,
      connections: OPEN_CONNECTIONS,
      openFirst: '/healthz',
    });
    trace?.stop();
    const victimRun = await victim;
    await Promise.all(pids.map(idle));
    const after = await Promise.all(pids.map(threadCpuOf));
    const accepted = load.byStatus.get(202) ?? { count: 0, p50: 0, p99: 0 };
    const refused = load.byStatus.get(503) ?? { count: 0, p50: 0, p99: 0 };
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return {
      variant: variant.name,
      capacityPerSec: capacity,
      offeredPerSec: rate,
      // Over the whole run, to the last answer: a queue that outlasts the offered load shows here.
      acceptedPerSec: Math.round(accepted.count / load.elapsedSeconds),
      acceptedP50Ms: round(accepted.p50),
      acceptedP99Ms: round(accepted.p99),
      overloaded: refused.count,
      overloadedP99Ms: round(refused.p99),
      sendLagP99Ms: round(load.sendLagP99),
      ...(victimRun === undefined
        ? {}
        : {
            victimAccepted: victimRun.byStatus.get(202)?.count ?? 0,
            victimRefused: victimRun.byStatus.get(503)?.count ?? 0,
            victimP50Ms: round(victimRun.byStatus.get(202)?.p50 ?? 0),
            victimP99Ms: round(victimRun.byStatus.get(202)?.p99 ?? 0),
          }),
      other: load.sent - accepted.count - refused.count,
      cpuUsPerAccepted: cpuPerEvent(before, after, accepted.count).cpuUsPerEvent,
      loadAverage: Math.round((loadavg()[0] as number) * 10) / 10,
    };
  } finally {
    await fleet.stop();
  }
}

async function main(): Promise<void> {
  console.log(`overload: ${MODE}, ${INSTANCES} instance(s), ${FACTOR}x the closed-loop capacity for ${OVERLOAD_SECONDS} s over ${OPEN_CONNECTIONS} sockets`);
  const results: Result[] = [];
  for (const variant of VARIANTS) {
    // Both variants are offered the same rate: the first variant's capacity times the factor.
    results.push(await run(variant, results[0]?.offeredPerSec));
    console.table(results);
  }
}

await main();
