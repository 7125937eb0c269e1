/**
 * Scale-out at fleet size on one machine: N Vigil instances (PostgreSQL + a Redis Cluster of
 * three masters with one replica each) behind HAProxy (`balance leastconn`, checks on /readyz),
 * driven by an open-loop mix of single events from many actors, batches, a brute-force campaign
 * (login failures on one actor from many addresses) and dashboard-API reads. At the end it
 * prints what each component cost per acknowledged event (CPU, WAL, storage, Redis commands and
 * memory, network) and checks every acknowledged event against the rows stored, writing all of
 * it to a JSON file. Everything it started is stopped on exit, on failure and on Ctrl-C.
 *
 *   npm run fleet -- --instances 4 --duration 30 --rate 300
 *   npm run fleet -- --fault instance-kill        (or redis-master-kill, pg-restart)
 *
 * Flags (or FLEET_<NAME> in the environment, e.g. FLEET_RATE=300):
 *   --instances N      Vigil processes (4)
 *   --duration S       measured seconds (30), after --warmup S (5)
 *   --rate R           requests per second, a batch being one (200)
 *   --mix M            weights of the request kinds: single=60,batch=10,brute=15,read=15
 *   --batch-size B     events per batch (20)
 *   --actors A         distinct actors of the single and batch events (50000)
 *   --accounts K       accounts the requests are spread over (2)
 *   --concurrency C    requests in flight at most (64); a request due beyond it is shed
 *   --retries R        tries after a 429/502/503/504 or a lost connection (5)
 *   --fault F          instance-kill | redis-master-kill | pg-restart, a third into the run.
 *                      pg-restart restarts the machine's PostgreSQL (`pg_ctlcluster <v> main
 *                      restart`): every other user of that server sees it too.
 *   --built            run dist/src/main.js (after `npm run build`) instead of the sources
 *   --out FILE         the JSON result (default: a file in the temp dir, printed at the end)
 * PostgreSQL: FLEET_DATABASE_URL (postgres://root@127.0.0.1:5432/test; a fresh schema, dropped
 * afterwards). HAProxy: FLEET_HAPROXY (/usr/sbin/haproxy).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startTestCluster, type TestCluster } from '../../test/helpers/redis-cluster.js';
import { BENCH_PLANS, freePort, keyFor, startNode, vigilEnv, type Server } from '../lib.js';
import { haproxyMissing, startHaproxy, type Balancer } from './haproxy.js';
import { KINDS, Load, parseMix, quantile, type LoadResult } from './load.js';
import {
  bucketQuantileMs,
  commitDelta,
  commitMetrics,
  CpuTracker,
  loadAverage,
  loopbackBytes,
  pgPids,
  pgSample,
  procIoBytes,
  redisInfo,
  type Group,
  type RedisNodeInfo,
} from './measure.js';

const FAULTS = ['instance-kill', 'redis-master-kill', 'pg-restart'] as const;
type Fault = (typeof FAULTS)[number];

const { values: flags } = parseArgs({
  options: {
    instances: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    rate: { type: 'string' },
    mix: { type: 'string' },
    'batch-size': { type: 'string' },
    actors: { type: 'string' },
    accounts: { type: 'string' },
    concurrency: { type: 'string' },
    retries: { type: 'string' },
    fault: { type: 'string' },
    built: { type: 'boolean' },
    out: { type: 'string' },
  },
});

function setting(name: keyof typeof flags, fallback: string): string {
  const value = flags[name] ?? process.env[`FLEET_${name.toUpperCase().replace('-', '_')}`] ?? fallback;
  return String(value);
}
function whole(name: keyof typeof flags, fallback: number, min = 1): number {
  const n = Number(setting(name, String(fallback)));
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, got ${setting(name, '')}`);
  return n;
}

const settings = {
  instances: whole('instances', 4),
  duration: whole('duration', 30),
  warmup: whole('warmup', 5, 0),
  rate: whole('rate', 200),
  mix: parseMix(setting('mix', 'single=60,batch=10,brute=15,read=15')),
  batchSize: whole('batch-size', 20),
  actors: whole('actors', 50_000),
  accounts: whole('accounts', 2),
  concurrency: whole('concurrency', 64),
  retries: whole('retries', 5, 0),
  fault: (flags.fault ?? process.env.FLEET_FAULT) as Fault | undefined,
  built: flags.built ?? process.env.FLEET_BUILT === '1',
};
if (settings.fault !== undefined && !FAULTS.includes(settings.fault)) throw new Error(`--fault must be one of ${FAULTS.join(', ')}, got ${settings.fault}`);

const PG_URL = process.env.FLEET_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const runId = randomBytes(4).toString('hex');
const schema = `vigil_fleet_${runId}`;
const applicationName = `vigil-fleet-${runId}`;

/** Every step that undoes a start, run last-first by cleanUp(). */
const undo: (() => Promise<void> | void)[] = [];
let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const step of undo.reverse()) await Promise.resolve(step()).catch((err: unknown) => console.error('clean-up:', err));
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the fleet`);
    void cleanUp().finally(() => process.exit(130));
  });

const log = (text: string) => console.log(`[fleet ${new Date().toISOString().slice(11, 19)}] ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops a child: SIGTERM (an instance drains), SIGKILL after `ms`. */
function stopChild(child: Server['child'], ms = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', () => (clearTimeout(timer), resolve()));
    child.kill('SIGTERM');
  });
}

interface Fleet {
  readonly dir: string;
  readonly cluster: TestCluster;
  readonly admin: pg.Pool;
  readonly instances: Server[];
  readonly balancer: Balancer;
  readonly keys: string[];
  startInstance(port: number): Promise<Server>;
}

async function startFleet(): Promise<Fleet> {
  const missing = haproxyMissing();
  if (missing) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), 'vigil-fleet-'));
  undo.push(() => rmSync(dir, { recursive: true, force: true }));
  const plansFile = join(dir, 'plans.json');
  writeFileSync(plansFile, BENCH_PLANS);

  log('starting a Redis Cluster: 3 masters, 1 replica each');
  // A short node timeout: a killed master's replica takes over within seconds, not the default 15 s.
  const cluster = await startTestCluster('fleet', { masters: 3, replicas: 1, nodeTimeoutMs: 2000 });
  if (!cluster) throw new Error('redis-server and redis-cli are needed');
  undo.push(() => cluster.stop());

  const admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
  admin.on('error', () => {}); // a PostgreSQL restart drops its idle connections; the next query opens one
  undo.push(() => admin.end());
  undo.push(async () => {
    await admin.query(`drop schema if exists "${schema}" cascade`);
    log(`dropped schema ${schema}`);
  });

  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  url.searchParams.set('application_name', applicationName);
  const env = (port: number) =>
    vigilEnv(port, plansFile, {
      VIGIL_DATA_DIR: dir,
      VIGIL_DATABASE_URL: url.toString(),
      VIGIL_REDIS_URL: cluster.url,
      VIGIL_REDIS_CLUSTER: 'on',
      VIGIL_REDIS_PREFIX: `vigil-fleet:${runId}:`,
      VIGIL_TRUST_PROXY: '127.0.0.1/32',
      VIGIL_LOG_LEVEL: 'warn',
    });
  const entry = settings.built ? ['dist/src/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  const instances: Server[] = [];
  const startInstance = async (port: number) => {
    const server = await startNode(entry, env(port), port, { path: '/readyz' });
    undo.push(() => stopChild(server.child));
    return server;
  };
  const ports = await Promise.all(Array.from({ length: settings.instances }, () => freePort()));
  log(`starting ${settings.instances} instances (${settings.built ? 'dist/' : 'sources via tsx'}) on schema ${schema}`);
  // The first one migrates the fresh schema; the others then find it ready.
  instances.push(await startInstance(ports[0] as number));
  instances.push(...(await Promise.all(ports.slice(1).map(startInstance))));

  const balancer = startHaproxy(dir, await freePort(), ports);
  undo.push(() => stopChild(balancer.process as Server['child'], 3000));
  const up = Date.now();
  while (
    !(await fetch(`http://127.0.0.1:${balancer.port}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() - up > 15_000) throw new Error('HAProxy did not answer /readyz within 15 s');
    await sleep(100);
  }
  const keys: string[] = [];
  for (let i = 0; i < settings.accounts; i++) keys.push(await keyFor(ports[0] as number, 'bench'));
  log(`HAProxy on 127.0.0.1:${balancer.port}, ${settings.accounts} accounts`);
  return { dir, cluster, admin, instances, balancer, keys, startInstance };
}

interface Snapshot {
  readonly at: number;
  readonly pg: Awaited<ReturnType<typeof pgSample>>;
  readonly redis: (RedisNodeInfo | undefined)[];
  readonly commits: Awaited<ReturnType<typeof commitMetrics>>[];
  readonly lo: number;
  readonly instanceIo: number;
  readonly redisIo: number;
}

async function snapshot(fleet: Fleet): Promise<Snapshot> {
  const sumIo = async (pids: (number | undefined)[]) =>
    (await Promise.all(pids.map((p) => (p === undefined ? 0 : procIoBytes(p))))).reduce<number>((a, b) => a + (b ?? 0), 0);
  return {
    at: performance.now(),
    pg: await pgSample(fleet.admin, schema),
    redis: fleet.cluster.nodes.map((n) => redisInfo(n.port)),
    commits: await Promise.all(fleet.instances.map((s) => commitMetrics(s.port))),
    lo: await loopbackBytes(),
    instanceIo: await sumIo(fleet.instances.map((s) => s.child.pid)),
    redisIo: await sumIo(fleet.cluster.nodes.map((n) => n.process.pid)),
  };
}

/** Timeline of what the fault did, in seconds from the start of the measured run. */
const timeline: { t: number; what: string }[] = [];

async function fault(fleet: Fleet, kind: Fault, t0: number): Promise<void> {
  const mark = (what: string) => {
    const t = Math.round((performance.now() - t0) / 100) / 10;
    timeline.push({ t, what });
    log(`t=${t}s ${what}`);
  };
  if (kind === 'instance-kill') {
    const victim = fleet.instances[1] ?? (fleet.instances[0] as Server);
    victim.child.kill('SIGKILL');
    mark(`SIGKILL instance on :${victim.port} (pid ${victim.child.pid})`);
    await sleep(5000); // a supervisor's restart delay
    const index = fleet.instances.indexOf(victim);
    fleet.instances[index] = await fleet.startInstance(victim.port);
    mark(`instance on :${victim.port} restarted and ready (pid ${fleet.instances[index]?.child.pid})`);
  } else if (kind === 'redis-master-kill') {
    const masters = fleet.cluster.masterPorts();
    const port = masters[1] ?? masters[0];
    const node = fleet.cluster.nodes.find((n) => n.port === port);
    if (!node) throw new Error('no Redis master to kill');
    node.process.kill('SIGKILL');
    mark(`SIGKILL Redis master :${port}`);
    const survivor = fleet.cluster.nodes.find((n) => n.port !== port) as (typeof fleet.cluster.nodes)[number];
    const started = performance.now();
    for (;;) {
      await sleep(200);
      const info = spawnSync('redis-cli', ['-p', String(survivor.port), 'cluster', 'info'], { encoding: 'utf8' }).stdout;
      if (info.includes('cluster_state:ok') && fleet.cluster.masterPorts().length === 3) break;
      if (performance.now() - started > 30_000) {
        mark('no failover within 30 s');
        return;
      }
    }
    mark(`replica promoted: masters ${fleet.cluster.masterPorts().join(', ')}`);
  } else {
    const version = readdirSync('/etc/postgresql')[0];
    if (version === undefined) throw new Error('no /etc/postgresql/<version>: cannot restart PostgreSQL');
    mark(`pg_ctlcluster ${version} main restart`);
    const run = spawnSync('pg_ctlcluster', [version, 'main', 'restart'], { encoding: 'utf8' });
    mark(`PostgreSQL restarted (exit ${run.status}${run.stderr ? `: ${run.stderr.trim()}` : ''})`);
  }
}

/** Alerts of the schema by type: how many, and how many sightings they count (detection state across a fault). */
async function alertsByType(admin: pg.Pool): Promise<Record<string, { alerts: number; sightings: number }>> {
  const { rows } = await admin.query<{ type: string; alerts: number; sightings: number }>(
    `select type, count(*)::int as alerts, sum(count)::int as sightings from "${schema}".alerts group by type order by type`,
  );
  return Object.fromEntries(rows.map((r) => [r.type, { alerts: r.alerts, sightings: r.sightings }]));
}

async function storedIds(admin: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await admin.query<{ event_id: string; n: number }>(
    `select event_id, count(*)::int as n from "${schema}".events where event_id is not null group by event_id`,
  );
  return new Map(rows.map((r) => [r.event_id, r.n]));
}

const bucketMs = (q: number | undefined) => (q === undefined || Number.isFinite(q) ? q : '>1000');
const perEvent = (total: number, events: number, digits = 1) => Math.round((total / Math.max(1, events)) * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const loadBefore = await loadAverage();
  const fleet = await startFleet();
  const load = new Load({
    port: fleet.balancer.port,
    keys: fleet.keys,
    rate: settings.rate,
    mix: settings.mix,
    batchSize: settings.batchSize,
    actors: settings.actors,
    concurrency: settings.concurrency,
    maxRetries: settings.retries,
    runId,
  });
  undo.push(() => load.close());
  const redisEmpty = fleet.cluster.nodes.map((n) => redisInfo(n.port));

  if (settings.warmup > 0) {
    log(`warm-up: ${settings.warmup} s at ${settings.rate} req/s`);
    await load.run(settings.warmup);
  }
  // Others' WAL on the shared server over a few quiet seconds: their rate, subtracted from ours.
  const quietWal = await pgSample(fleet.admin, schema);
  await sleep(3000);
  const backgroundWalPerSecond = ((await pgSample(fleet.admin, schema)).walBytes - quietWal.walBytes) / 3;

  const tracker = new CpuTracker(async () => {
    const out: [Group, number][] = [];
    for (const s of fleet.instances) if (s.child.pid !== undefined) out.push(['instances', s.child.pid]);
    if (fleet.balancer.process.pid !== undefined) out.push(['haproxy', fleet.balancer.process.pid]);
    for (const n of fleet.cluster.nodes) if (n.process.pid !== undefined) out.push(['redis', n.process.pid]);
    out.push(...(await pgPids(fleet.admin, applicationName)));
    return out;
  });
  const before = await snapshot(fleet);
  await tracker.start();
  log(
    `measuring: ${settings.duration} s at ${settings.rate} req/s, ${settings.instances} instances${settings.fault ? `, fault ${settings.fault}` : ''} (load ${await loadAverage()})`,
  );
  const t0 = performance.now();
  const result: LoadResult = await load.run(
    settings.duration,
    settings.fault ? [{ second: settings.duration / 3, action: () => fault(fleet, settings.fault as Fault, t0) }] : [],
  );
  await sleep(1000); // commit groups and replication in flight when the last answer arrived
  const cpu = await tracker.stop();
  const after = await snapshot(fleet);
  const loadAfter = await loadAverage();
  const seconds = (after.at - before.at) / 1000;

  // Every event the client sent, warm-up included, against the rows of the schema.
  const stored = await storedIds(fleet.admin);
  let duplicates = 0;
  let storedRows = 0;
  for (const n of stored.values()) {
    storedRows += n;
    duplicates += n - 1;
  }
  let lost = 0;
  for (const id of load.acked) if (!stored.has(id)) lost++;
  let storedUnacknowledged = 0;
  for (const id of stored.keys()) if (!load.acked.has(id)) storedUnacknowledged++;
  let unknownStored = 0;
  for (const id of stored.keys()) if (!load.sent.has(id)) unknownStored++;

  const events = result.acknowledged;
  const reads = result.byKind.read.requests;
  const cpuRows: { component: string; cpuSeconds: number; usPerEvent: number; coresUsed: number }[] = (Object.entries(cpu) as [Group, number][]).map(
    ([group, s]) => ({
      component: group as string,
      cpuSeconds: Math.round(s * 100) / 100,
      usPerEvent: perEvent(s * 1e6, events, 0),
      coresUsed: Math.round((s / seconds) * 100) / 100,
    }),
  );
  cpuRows.push({
    component: 'load generator',
    cpuSeconds: Math.round(result.clientCpuSeconds * 100) / 100,
    usPerEvent: perEvent(result.clientCpuSeconds * 1e6, events, 0),
    coresUsed: Math.round((result.clientCpuSeconds / seconds) * 100) / 100,
  });

  const alive = (i: number) => before.redis[i] !== undefined && after.redis[i] !== undefined;
  const redisSum = (f: (a: RedisNodeInfo, b: RedisNodeInfo) => number, role?: string) =>
    fleet.cluster.nodes.reduce((n, _, i) => {
      const a = after.redis[i];
      const b = before.redis[i];
      return !alive(i) || !a || !b || (role !== undefined && a.role !== role) ? n : n + f(a, b);
    }, 0);
  const calls = (a: RedisNodeInfo, b: RedisNodeInfo) =>
    Object.entries(a.calls).reduce(
      (n, [cmd, c]) => (['info', 'cluster', 'ping', 'command'].includes(cmd.split('|')[0] as string) ? n : n + c - (b.calls[cmd] ?? 0)),
      0,
    );
  const byCommand: Record<string, number> = {};
  fleet.cluster.nodes.forEach((_, i) => {
    const a = after.redis[i];
    const b = before.redis[i];
    if (!a || !b || a.role !== 'master') return;
    for (const [cmd, c] of Object.entries(a.calls)) byCommand[cmd] = (byCommand[cmd] ?? 0) + c - (b.calls[cmd] ?? 0);
  });
  const masterCalls = redisSum(calls, 'master');
  const usedMemoryEnd = after.redis.reduce((n, r) => n + (r?.role === 'master' ? r.usedMemory : 0), 0);
  const usedMemoryEmpty = redisEmpty.reduce((n, r) => n + (r?.role === 'master' ? r.usedMemory : 0), 0);
  const commits = commitDelta(before.commits, after.commits);
  const tableBytes = (s: Snapshot) => Object.values(s.pg.tableBytes).reduce((a, b) => a + b, 0);
  const walRaw = after.pg.walBytes - before.pg.walBytes;
  const walOurs = walRaw - backgroundWalPerSecond * seconds;
  const kinds = Object.fromEntries(
    KINDS.map((k) => {
      const s = result.byKind[k];
      return [
        k,
        {
          requests: s.requests,
          statuses: s.statuses,
          retried: s.retried,
          retryReasons: s.retryReasons,
          p50ms: quantile(s.latenciesMs, 0.5),
          p99ms: quantile(s.latenciesMs, 0.99),
        },
      ];
    }),
  );

  const figures = {
    eventsAcknowledged: events,
    eventsPerSecond: Math.round(events / seconds),
    readsPerSecond: Math.round(reads / seconds),
    rowsStoredPerSecond: Math.round((after.pg.rows - before.pg.rows) / seconds),
    walBytesPerEvent: perEvent(walOurs, events, 0),
    walBytesPerEventRaw: perEvent(walRaw, events, 0),
    walMBPerSecond: Math.round((walOurs / seconds / 1e6) * 100) / 100,
    tableAndIndexBytesPerEvent: perEvent(tableBytes(after) - tableBytes(before), events, 0),
    commitMeanMs: commits.commits > 0 ? Math.round((commits.commitSeconds / commits.commits) * 1e4) / 10 : undefined,
    /** The upper bounds of the histogram buckets holding the p50 and the p99 (the last bound is 1 s: beyond it, ">1000"). */
    commitP50Ms: bucketMs(bucketQuantileMs(commits, 0.5)),
    commitP99Ms: bucketMs(bucketQuantileMs(commits, 0.99)),
    commitGroupMeanEvents: commits.groups > 0 ? Math.round((commits.groupEvents / commits.groups) * 10) / 10 : undefined,
    redisCommandsPerEvent: perEvent(masterCalls, events, 2),
    redisReplicaCommandsPerEvent: perEvent(redisSum(calls, 'slave'), events, 2),
    redisCpuUsPerEventInfo: perEvent(redisSum((a, b) => a.cpuSeconds - b.cpuSeconds) * 1e6, events, 0),
    /** The masters' part: what sizes a master, since each runs on one core. */
    redisMasterCpuUsPerEvent: perEvent(redisSum((a, b) => a.cpuSeconds - b.cpuSeconds, 'master') * 1e6, events, 0),
    redisMasterOpsPerSecond: Math.round(masterCalls / seconds / Math.max(1, fleet.cluster.masterPorts().length)),
    redisBytesPerActor: perEvent(usedMemoryEnd - usedMemoryEmpty, load.actorsSeen.size + 1, 0),
    distinctActors: load.actorsSeen.size,
    clientBytesPerEvent: perEvent(result.bytesSent + result.bytesReceived, events, 0),
    clientRequestBytesPerEvent: perEvent(result.bytesSent, events, 0),
    clientResponseBytesPerEvent: perEvent(result.bytesReceived, events, 0),
    instanceSocketAndFileBytesPerEvent: perEvent(after.instanceIo - before.instanceIo, events, 0),
    redisNodeSocketBytesPerEvent: perEvent(after.redisIo - before.redisIo, events, 0),
    loopbackBytesPerEventMachineWide: perEvent(after.lo - before.lo, events, 0),
  };
  const check = {
    acknowledged: load.acked.size,
    sent: load.sent.size,
    storedRows,
    storedDistinct: stored.size,
    duplicates,
    lostAcknowledged: lost,
    storedUnacknowledged,
    unknownStored,
    errorsSeen: result.errorsSeen,
    givenUp: result.givenUp,
    degradedAnswers: result.degraded,
    shedByGenerator: result.shed,
    firstFailureSecond: result.firstFailureSecond,
    lastFailureSecond: result.lastFailureSecond,
    lastDegradedSecond: result.lastDegradedSecond,
  };
  const alerts = await alertsByType(fleet.admin);

  console.log(
    `\nFleet: ${settings.instances} instances, ${seconds.toFixed(1)} s, ${settings.rate} req/s offered; load average before ${loadBefore}, after ${loadAfter}`,
  );
  console.table(cpuRows);
  console.table(Object.entries(figures).map(([figure, value]) => ({ figure, value })));
  console.table(Object.entries(kinds).map(([kind, k]) => ({ kind, ...k, statuses: JSON.stringify(k.statuses), retryReasons: JSON.stringify(k.retryReasons) })));
  console.log(
    'Redis commands per event (masters):',
    Object.fromEntries(
      Object.entries(byCommand)
        .filter(([, n]) => n > 0)
        .map(([c, n]) => [c, perEvent(n, events, 2)]),
    ),
  );
  console.table([check]);
  console.table(alerts);
  if (timeline.length > 0) console.table(timeline);

  const out = flags.out ?? process.env.FLEET_OUT ?? join(tmpdir(), `vigil-fleet-${runId}.json`);
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        runId,
        at: new Date().toISOString(),
        settings,
        machine: { loadAverageBefore: loadBefore, loadAverageAfter: loadAfter, backgroundWalBytesPerSecond: Math.round(backgroundWalPerSecond) },
        seconds,
        cpu: cpuRows,
        figures,
        kinds,
        redisCommandsPerEvent: Object.fromEntries(Object.entries(byCommand).map(([c, n]) => [c, perEvent(n, events, 3)])),
        tableBytesAfter: after.pg.tableBytes,
        check,
        alerts,
        timeline,
        perSecond: result.perSecond,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`result: ${out}`);
  const ok = check.lostAcknowledged === 0 && check.duplicates === 0 && check.unknownStored === 0;
  if (!ok) {
    console.error('FAIL: an acknowledged event is missing, or an event was stored twice');
    process.exitCode = 1;
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => cleanUp());
