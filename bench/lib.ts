/** Shared by the end-to-end benchmarks: child-process servers, payloads, and autocannon runs. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { pacedLoad } from './paced.js';
import { benchEvent } from './workload.js';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const ADMIN = 'bench-admin-token-0123456789';

export interface Server {
  readonly port: number;
  readonly child: ChildProcess;
}

/**
 * The Node flags `npm start` runs the service with in the checkout at `dir` (package.json is the
 * one place they are written), so that every benchmark measures a service as it ships.
 */
export function serviceNodeFlags(dir: string = fileURLToPath(new URL('..', import.meta.url))): readonly string[] {
  const start = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).filter((word) => word.startsWith('--'));
}
export const SERVICE_NODE_FLAGS: readonly string[] = serviceNodeFlags();

/**
 * The Node that benchmarked servers run on: VIGIL_BENCH_NODE (the path of another `node`, e.g. one
 * from `.ci/registry-node 24`) or the Node running the benchmark. The load generator stays on the
 * latter, so two Nodes are compared under the same client.
 */
export const SERVER_NODE: string = process.env.VIGIL_BENCH_NODE || process.execPath;

/** `node --version` of SERVER_NODE, for the benchmark's output. */
export function serverNodeVersion(): string {
  return execFileSync(SERVER_NODE, ['--version'], { encoding: 'utf8' }).trim();
}

/**
 * Starts `node <flags of npm start> <nodeArgs>` (in `cwd`) on SERVER_NODE and resolves once GET
 * `path` answers: any answer for /healthz (the bare route has none and answers 404), a 2xx for /readyz.
 */
export function startNode(
  nodeArgs: string[],
  env: Record<string, string>,
  port: number,
  options: { cwd?: string; path?: '/healthz' | '/readyz' } = {},
): Promise<Server> {
  const path = options.path ?? '/healthz';
  // A checkout runs with its own `npm start` flags: a baseline is measured as it shipped.
  const child = spawn(SERVER_NODE, [...(options.cwd === undefined ? SERVICE_NODE_FLAGS : serviceNodeFlags(options.cwd)), ...nodeArgs], {
    cwd: options.cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server ${nodeArgs.join(' ')} exited early (${code})`)));
    const poll = async () => {
      const ready = await fetch(`http://127.0.0.1:${port}${path}`).then(
        (res) => path === '/healthz' || res.ok,
        () => false,
      );
      if (ready) resolve({ port, child });
      else if (child.exitCode === null) setTimeout(poll, 50);
    };
    void poll();
  });
}

/** Starts `node --import tsx <args>` and resolves once GET /healthz answers. */
export function start(args: string[], env: Record<string, string>, port: number): Promise<Server> {
  return startNode(['--import', 'tsx', ...args], env, port);
}

/** A port the OS just handed out and released: free now, unlike a random guess. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The environment of a Vigil process with limits out of the way of a benchmark. */
export function vigilEnv(port: number, plansFile: string, extra: Record<string, string>): Record<string, string> {
  return {
    VIGIL_PORT: String(port),
    VIGIL_HOST: '127.0.0.1',
    VIGIL_PLANS_FILE: plansFile,
    VIGIL_IP_LIMITS: '127.0.0.1/32=1000000000',
    VIGIL_ADMIN_TOKEN: ADMIN,
    // autocannon ignores `Connection: close` and would get 503s after the per-socket limit.
    VIGIL_MAX_REQUESTS_PER_SOCKET: '0',
    ...extra,
  };
}

/** A plan ("bench") that no benchmark reaches the limits of, with threat models (their lookup is on every request's path). */
export const BENCH_PLANS = JSON.stringify({
  plans: {
    bench: { rpm: 1_000_000_000, eps: 1_000_000_000, batch_max: 100, monthly_cap: 1_000_000_000, overage: 'bill', threat_models: true, retention_days: 30 },
  },
});

/**
 * A temporary data folder holding the bench plan, and the environment of a service run in process
 * on it (for the built modules' loadConfig); `extra` adds variables or overrides these.
 */
export function inProcessEnv(name: string, extra: Record<string, string> = {}): { readonly dir: string; readonly env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), `vigil-${name}-`));
  writeFileSync(join(dir, 'plans.json'), BENCH_PLANS);
  return { dir, env: { VIGIL_DATA_DIR: dir, VIGIL_PLANS_FILE: join(dir, 'plans.json'), VIGIL_LOG_LEVEL: 'silent', ...extra } };
}

export async function postJson(url: string, headers: Record<string, string>, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A secret key of a new account on `plan`, through the admin API of the server on `port`. */
export async function keyFor(port: number, plan: string): Promise<string> {
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const acct = await postJson(`http://127.0.0.1:${port}/admin/accounts`, admin, { name: plan, plan });
  return (await postJson(`http://127.0.0.1:${port}/admin/accounts/${String(acct.id)}/keys`, admin, { kind: 'secret' })).key as string;
}

export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

/** `count` request bodies of the workload: single events, or batches of `batch`; event numbers start at `first`. */
export function bodies(count: number, batch: number, first = 0): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    if (batch === 1) out.push(JSON.stringify(benchEvent(first + i)));
    else out.push(JSON.stringify({ events: Array.from({ length: batch }, (_, j) => benchEvent(first + i * batch + j)) }));
  }
  return out;
}

let eventIdCounter = 0;
const eventIdSuffix = randomBytes(3).toString('hex');
/**
 * A new time-ordered event_id in the UUIDv7 layout the official clients send (their `uuidv7`).
 * A counter stands in for the random bits: benchmarks that measure their own thread's CPU
 * (bench/pipeline-cost.ts) then pay next to nothing for making ids.
 */
export function newEventId(): string {
  const ms = Date.now().toString(16).padStart(12, '0');
  const n = (eventIdCounter++).toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8)}-7${n.slice(0, 3)}-8${n.slice(3, 6)}-${eventIdSuffix}${n.slice(6)}`;
}

export interface Row {
  scenario: string;
  target: string;
  reqPerSec: number;
  eventsPerSec: number;
  p50: number;
  p99: number;
  p999: number;
  non2xx: number;
  rssMb: number;
  /** Server CPU (all threads, user + system) per 2xx event: robust to a noisy machine, unlike rates. */
  cpuUsPerEvent: number;
  /** Of that, the request thread (the process's main thread). */
  requestUs: number;
  /** Of that, the SQLite writer thread and the checkpoint thread beside it. */
  writerUs: number;
  /** Of that, every other thread: V8's GC and compiler helpers, libuv's pool. */
  helpersUs: number;
  /** The request thread's own garbage collection per event (part of requestUs), from the service's /metrics; 0 for the bare route. */
  requestGcUs: number;
  /**
   * Runs at the maximum rate: CPU of the load generator (autocannon, in this process) per request
   * it completed. It shares the machine with the server, so it bounds the rate any server
   * reaches here: cores × 1 s ÷ (server CPU + this) per request.
   */
  loadGenUsPerRequest?: number;
  /**
   * Paced runs: the p99 the service itself measured (its request-duration histogram, from the
   * request's arrival to its answer), as the upper bound of the histogram bucket holding it (ms).
   * The client's p99 also holds the time a request waited to be sent or read back on a busy host.
   */
  serviceP99?: number;
}

/** CPU seconds (user + system, 100 Hz ticks) a process has used so far, per kind of thread. */
export interface ThreadCpu {
  readonly request: number;
  /** The SQLite writer thread and the checkpoint thread: together, what the writer alone did when it checkpointed itself. */
  readonly writer: number;
  readonly helpers: number;
}

/** The names the SQLite writer and checkpoint threads give themselves (src/storage/sqlite-*-thread.ts). */
const WRITER_THREADS: ReadonlySet<string> = new Set(['vigil-writer', 'vigil-checkpt']);

async function ticksOf(statFile: string): Promise<{ comm: string; seconds: number }> {
  const stat = await readFile(statFile, 'utf8').catch(() => '');
  if (stat === '') return { comm: '', seconds: 0 };
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), seconds: (Number(fields[11]) + Number(fields[12])) / 100 };
}

/**
 * CPU seconds so far per kind of thread, from /proc/<pid>/task/<tid>/stat. A thread that ended
 * takes its ticks with it from the per-thread figures but not from the process's total, so
 * `helpers` is the total less the named threads.
 */
export async function threadCpuOf(pid: number): Promise<ThreadCpu> {
  const total = (await ticksOf(`/proc/${pid}/stat`)).seconds;
  let request = 0;
  let writer = 0;
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const t = await ticksOf(`/proc/${pid}/task/${tid}/stat`);
    if (tid === String(pid)) request = t.seconds;
    else if (WRITER_THREADS.has(t.comm)) writer += t.seconds;
  }
  return { request, writer, helpers: total - request - writer };
}

/** Whole µs per event of `seconds` spread over `events`. */
const perEventUs = (seconds: number, events: number): number => Math.round((seconds * 1e6) / Math.max(1, events));

/** Per-event CPU fields of a Row from two ThreadCpu readings summed over servers, and the events served. */
export function cpuPerEvent(
  before: readonly ThreadCpu[],
  after: readonly ThreadCpu[],
  events: number,
): Pick<Row, 'cpuUsPerEvent' | 'requestUs' | 'writerUs' | 'helpersUs'> {
  const delta = (kind: keyof ThreadCpu) => after.reduce((n, a, k) => n + a[kind] - (before[k] as ThreadCpu)[kind], 0);
  const us = (seconds: number) => perEventUs(seconds, events);
  const request = delta('request');
  const writer = delta('writer');
  const helpers = delta('helpers');
  return { cpuUsPerEvent: us(request + writer + helpers), requestUs: us(request), writerUs: us(writer), helpersUs: us(helpers) };
}

/** The server's /metrics text, or undefined where it has none (the bare route). */
export async function metricsTextOf(server: Server): Promise<string | undefined> {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`).catch(() => undefined);
  return res?.ok ? res.text() : undefined;
}

/** Events the server counted as accepted so far (its /metrics), or undefined where it has none (the bare route). */
export async function acceptedOf(server: Server): Promise<number | undefined> {
  const text = await metricsTextOf(server);
  if (text === undefined) return undefined;
  const match = /^vigil_events_total\{outcome="accepted"\} (\d+)/m.exec(text);
  return match ? Number(match[1]) : 0;
}

/** Major (mark-compact) collections of the server so far and the time they paused its request thread, from its /metrics. */
export async function majorGcOf(server: Server): Promise<{ count: number; ms: number }> {
  const text = (await metricsTextOf(server)) ?? '';
  const value = (suffix: string) => Number(new RegExp(`^vigil_nodejs_gc_duration_seconds_${suffix}\\{kind="major"\\} (\\S+)`, 'm').exec(text)?.[1] ?? 0);
  return { count: value('count'), ms: value('sum') * 1000 };
}

/**
 * Seconds the server's request thread has spent in garbage collection so far, every kind (its
 * /metrics: V8 reports each collection's time on the thread that runs JavaScript), or 0 where it
 * has no metrics (the bare route). The collector's helper threads are in Row.helpersUs.
 */
async function requestGcSecondsOf(server: Server): Promise<number> {
  const text = await metricsTextOf(server);
  if (text === undefined) return 0;
  let seconds = 0;
  for (const m of text.matchAll(/^vigil_nodejs_gc_duration_seconds_sum\{kind="[^"]+"\} (\S+)/gm)) seconds += Number(m[1]);
  return seconds;
}

/** The service's request-duration histogram for POST /v1/events so far: [upper bound in s, cumulative count]; empty for the bare route. */
async function durationBucketsOf(server: Server): Promise<[number, number][]> {
  const text = await metricsTextOf(server);
  if (text === undefined) return [];
  const bucket = /^vigil_http_request_duration_seconds_bucket\{le="([^"]+)",route="\/v1\/events"\} (\d+)/gm;
  return [...text.matchAll(bucket)].map((m) => [m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
}

/** The upper bound (ms) of the bucket holding quantile `q` of the requests between two histogram readings. */
function bucketQuantile(before: readonly [number, number][], after: readonly [number, number][], q: number): number | undefined {
  const counts = after.map(([le, n], k) => [le, n - (before[k]?.[1] ?? 0)] as const);
  const total = counts.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  return (counts.find(([, n]) => n >= q * total)?.[0] ?? Infinity) * 1000;
}

/**
 * Waits until the process has used less than one CPU tick in half a second (at most 60 s): work
 * queued when the client stopped (batches take seconds under load) is then done, and counted
 * with the run that sent it rather than with the next one.
 */
export async function idle(pid: number): Promise<void> {
  const until = Date.now() + 60_000;
  const total = (cpu: ThreadCpu) => cpu.request + cpu.writer + cpu.helpers;
  let last = total(await threadCpuOf(pid));
  while (Date.now() < until) {
    await new Promise((done) => setTimeout(done, 500));
    const now = total(await threadCpuOf(pid));
    if (now - last < 0.02) return;
    last = now;
  }
}

/**
 * Drives the servers together for SECONDS with CONNECTIONS split evenly between them (a load
 * balancer in front of N instances). Throughput adds up; latency percentiles are the worst
 * server's; RSS is the sum. CPU per event is counted from idle to idle, over the events the
 * servers themselves counted as accepted (the client's 2xx count where a server counts none).
 */
export async function drive(
  target: string,
  scenario: string,
  servers: readonly Server[],
  path: string,
  payloads: string[],
  batch: number,
  headers: Record<string, string>,
  rate?: number,
  seconds = SECONDS,
): Promise<Row> {
  let i = 0;
  await Promise.all(servers.map((s) => idle(s.child.pid as number)));
  const cpuBefore = await Promise.all(servers.map((s) => threadCpuOf(s.child.pid as number)));
  const acceptedBefore = await Promise.all(servers.map(acceptedOf));
  const gcBefore = await Promise.all(servers.map(requestGcSecondsOf));
  const clientBefore = process.cpuUsage();
  const runs = await Promise.all(
    servers.map((server) =>
      autocannon({
        url: `http://127.0.0.1:${server.port}`,
        connections: Math.max(1, Math.round(CONNECTIONS / servers.length)),
        duration: seconds,
        ...(rate === undefined ? {} : { overallRate: Math.max(1, Math.round(rate / servers.length)) }),
        requests: [
          {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', ...headers },
            setupRequest: (req: autocannon.Request) => ({ ...req, body: payloads[i++ % payloads.length] }),
          },
        ],
      }),
    ),
  );
  const client = process.cpuUsage(clientBefore);
  const rss = await Promise.all(servers.map((s) => rssOf(s.child.pid as number)));
  await Promise.all(servers.map((s) => idle(s.child.pid as number)));
  const cpuAfter = await Promise.all(servers.map((s) => threadCpuOf(s.child.pid as number)));
  const acceptedAfter = await Promise.all(servers.map(acceptedOf));
  const gcAfter = await Promise.all(servers.map(requestGcSecondsOf));
  const sum = (f: (r: autocannon.Result) => number) => runs.reduce((n, r) => n + f(r), 0);
  const worst = (f: (r: autocannon.Result) => number) => Math.max(...runs.map(f));
  const clientCounted = sum((r) => r['2xx']) * batch;
  const completed = sum((r) => r.requests.total);
  const serverCounted = acceptedAfter.reduce<number | undefined>((n, after, k) => {
    const before = acceptedBefore[k];
    return n === undefined || after === undefined || before === undefined ? undefined : n + after - before;
  }, 0);
  return {
    scenario,
    target,
    reqPerSec: Math.round(sum((r) => r.requests.average)),
    eventsPerSec: Math.round(clientCounted / seconds),
    p50: worst((r) => r.latency.p50),
    p99: worst((r) => r.latency.p99),
    p999: worst((r) => r.latency.p99_9 ?? r.latency.p99),
    non2xx: sum((r) => r.non2xx),
    rssMb: Math.round(rss.reduce((a, b) => a + b, 0) / 1e6),
    ...cpuPerEvent(cpuBefore, cpuAfter, serverCounted ?? clientCounted),
    requestGcUs: perEventUs(
      gcAfter.reduce((n, after, k) => n + after - (gcBefore[k] ?? 0), 0),
      serverCounted ?? clientCounted,
    ),
    loadGenUsPerRequest: Math.round((client.user + client.system) / Math.max(1, completed)),
  };
}

/**
 * Single events to one server at a steady `rate` (open loop, bench/paced.ts): the latency
 * scenario. Percentiles are counted from the time each request was due.
 */
export async function drivePaced(
  target: string,
  scenario: string,
  server: Server,
  path: string,
  payloads: string[],
  headers: Record<string, string>,
  rate: number,
  seconds = SECONDS,
): Promise<Row> {
  const pid = server.child.pid as number;
  await idle(pid);
  const cpuBefore = await threadCpuOf(pid);
  const gcBefore = await requestGcSecondsOf(server);
  const bucketsBefore = await durationBucketsOf(server);
  const run = await pacedLoad({ port: server.port, path, headers, payloads, rate, seconds, connections: CONNECTIONS });
  const serviceP99 = bucketQuantile(bucketsBefore, await durationBucketsOf(server), 0.99);
  await idle(pid);
  const cpuAfter = await threadCpuOf(pid);
  const gcAfter = await requestGcSecondsOf(server);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    scenario,
    target,
    reqPerSec: run.rate,
    eventsPerSec: Math.round(run.ok / seconds),
    p50: round(run.p50),
    p99: round(run.p99),
    p999: round(run.p999),
    non2xx: run.non2xx + run.errors,
    rssMb: Math.round((await rssOf(pid)) / 1e6),
    ...cpuPerEvent([cpuBefore], [cpuAfter], run.ok),
    requestGcUs: perEventUs(gcAfter - gcBefore, run.ok),
    ...(serviceP99 === undefined ? {} : { serviceP99 }),
  };
}
