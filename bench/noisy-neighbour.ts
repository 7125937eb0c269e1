/**
 * A noisy neighbour against the built service (`dist/src/main.js`, flags of `npm start`) on a real
 * port: the attacks of test/helpers/noisy-neighbour.ts, each run by a Business account in
 * BENCH_LOOPS (2) loops while a Pro account sends BENCH_SAMPLES (400) single events one at a
 * time, in embedded mode (SQLite, in-memory state) and in scale-out mode (PostgreSQL + Redis).
 * Phases: the victim alone (quiet), next to ordinary events from the neighbour, then each attack
 * (its setup first). Per phase: the victim's p50/p99/max, its p99 against the ordinary
 * neighbour's and the quiet one's, the attacker's requests answered, and the service's CPU (all
 * threads, from the first idle moment before the phase to the first after it) per attacker
 * request. PASS when every attack runs without an unexpected answer and keeps the victim's p99
 * within 3× of its p99 next to the ordinary neighbour.
 *
 *   npm run bench:noisy-neighbour     builds, then both modes
 *   BENCH_MODES=embedded (or scale-out; default both)  BENCH_SAMPLES=400  BENCH_LOOPS=2
 *   PostgreSQL: VIGIL_BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/test; a fresh
 *   schema, dropped afterwards). Redis: VIGIL_BENCH_REDIS_URL (default redis://127.0.0.1:6379; a
 *   fresh key prefix, deleted afterwards).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  ATTACKS,
  ORDINARY,
  ORDINARY_BATCHES,
  percentile,
  victimLatencies,
  whileAttacking,
  type Attack,
  type Environment,
  type Send,
} from '../test/helpers/noisy-neighbour.js';
import { deleteKeysWithPrefix } from '../test/helpers/redis-keys.js';
import { WebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { ADMIN, freePort, postJson, startNode, threadCpuOf, vigilEnv, type Server } from './lib.js';
import { stopServer } from './prefill.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 400);
const LOOPS = Number(process.env.BENCH_LOOPS ?? 2);
const MODES = (process.env.BENCH_MODES ?? 'embedded,scale-out').split(',').filter(Boolean);
const PG_URL = process.env.VIGIL_BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS_URL = process.env.VIGIL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ORIGIN = 'https://attacker.example';
/** Any request taking longer is an answer that never came: the phase reports it as an error. */
const REQUEST_TIMEOUT_MS = 60_000;
const WARM_UP_SAMPLES = 100;

/** Default sizes and caps of every plan, with rate limits too high to matter (as the functional test has them). */
const PLANS = JSON.stringify({
  plans: Object.fromEntries(['free', 'starter', 'pro', 'business'].map((plan) => [plan, { rpm: 100_000_000, eps: 100_000_000 }])),
});

interface Phase {
  readonly name: string;
  /** The ordinary traffic this phase is compared with (none for the quiet and ordinary phases). */
  readonly baseline?: Attack['baseline'];
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly attackerRequests: number;
  /** Service CPU (all threads) over the phase, seconds. */
  readonly cpuSeconds: number;
  /** The first unexpected answer (or failure) and how many rounds had one. */
  readonly error?: string;
}

/**
 * A Send over fetch to the service on `port`. A real socket's address cannot be chosen, so a
 * request's `remoteAddress` travels as X-Forwarded-For, which the service trusts from loopback.
 */
function fetchSend(port: number): Send {
  return async (r) => {
    const headers: Record<string, string> = { ...r.headers };
    if (r.remoteAddress !== undefined) headers['x-forwarded-for'] = r.remoteAddress;
    const res = await fetch(`http://127.0.0.1:${port}${r.url}`, {
      method: r.method,
      headers,
      ...(r.body === undefined ? {} : { body: typeof r.body === 'string' ? r.body : JSON.stringify(r.body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { status: res.status, body: await res.text() };
  };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 200);

async function cpuSecondsOf(pid: number): Promise<number> {
  const cpu = await threadCpuOf(pid);
  return cpu.request + cpu.writer + cpu.helpers;
}

/**
 * Waits until the service has used under two CPU ticks in half a second (at most 30 s), so work
 * an earlier phase left queued (deliveries, writes) is not counted in the next one.
 */
async function idle(pid: number): Promise<void> {
  const until = Date.now() + 30_000;
  let last = await cpuSecondsOf(pid);
  while (Date.now() < until) {
    await sleep(500);
    const now = await cpuSecondsOf(pid);
    if (now - last < 0.02) return;
    last = now;
  }
}

/** An account on `plan` with a secret key and a publishable key allowed from ORIGIN, through the admin API. */
async function account(port: number, plan: string): Promise<{ secret: string; publishable: string }> {
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const base = `http://127.0.0.1:${port}/admin/accounts`;
  const id = String((await postJson(base, admin, { name: `noisy-${plan}`, plan })).id);
  const secret = (await postJson(`${base}/${id}/keys`, admin, { kind: 'secret' })).key as string;
  const publishable = (await postJson(`${base}/${id}/keys`, admin, { kind: 'publishable', allowed_origins: [ORIGIN] })).key as string;
  return { secret, publishable };
}

/**
 * Runs one phase: the attack's setup, then the victim's samples while the attack runs in LOOPS
 * loops (none for the quiet phase). An unexpected answer is recorded, not thrown, and the loop
 * that met it pauses briefly so a refusing service is not hammered by a tight loop.
 */
async function phase(name: string, env: Environment, victimSend: Send, victim: string, pid: number, attack?: Attack): Promise<Phase> {
  let attackerRequests = 0;
  const counted: Environment = {
    ...env,
    send: async (r) => {
      const answer = await env.send(r);
      attackerRequests++;
      return answer;
    },
  };
  const failures: string[] = [];
  const empty = { name, p50: 0, p99: 0, max: 0, attackerRequests: 0, cpuSeconds: 0 };
  try {
    await attack?.setup?.(counted);
  } catch (err) {
    return { ...empty, error: `setup: ${messageOf(err)}` };
  }
  await idle(pid);
  attackerRequests = 0;
  const cpuBefore = await cpuSecondsOf(pid);
  let latencies: number[] = [];
  try {
    const measure = () => victimLatencies(victimSend, victim, SAMPLES);
    if (attack === undefined) latencies = await measure();
    else {
      const guarded: Attack = {
        name: attack.name,
        baseline: attack.baseline,
        async once(e, round) {
          try {
            await attack.once(e, round);
          } catch (err) {
            failures.push(messageOf(err));
            await sleep(50);
          }
        },
      };
      latencies = await whileAttacking(counted, guarded, LOOPS, measure);
    }
  } catch (err) {
    failures.unshift(`victim: ${messageOf(err)}`);
  }
  await idle(pid);
  const cpuSeconds = (await cpuSecondsOf(pid)) - cpuBefore;
  return {
    name,
    ...(attack === undefined || ORDINARY_PHASES.includes(attack) ? {} : { baseline: attack.baseline }),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(0, ...latencies),
    attackerRequests,
    cpuSeconds,
    ...(failures.length === 0 ? {} : { error: `${failures.length} failed: ${failures[0] as string}` }),
  };
}

const ORDINARY_PHASES: readonly Attack[] = [ORDINARY, ORDINARY_BATCHES];

/** The URL with `search_path` set to `schema` for every connection. */
function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Runs every phase against one service started with `extra` in its environment. */
async function runMode(mode: string, extra: Record<string, string>, plansFile: string, receiver: WebhookReceiver): Promise<Phase[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vigil-noisy-'));
  const port = await freePort();
  const env = vigilEnv(port, plansFile, {
    VIGIL_DATA_DIR: dataDir,
    VIGIL_LOG_LEVEL: 'warn',
    VIGIL_TRUST_PROXY: '127.0.0.1/32',
    VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32',
    // The attacks' setup saves many models; the attacks themselves then run unthrottled.
    VIGIL_THREAT_MODEL_CHANGES_PER_MINUTE: '1000000',
    ...extra,
  });
  let server: Server | undefined;
  try {
    server = await startNode(['dist/src/main.js'], env, port, { path: '/readyz' });
    const pid = server.child.pid as number;
    const attacker = await account(port, 'business');
    const victim = (await account(port, 'pro')).secret;
    const send = fetchSend(port);
    const environment: Environment = {
      send,
      attacker: { ...attacker, origin: ORIGIN },
      adminToken: ADMIN,
      webhookUrl: receiver.url,
    };
    await victimLatencies(send, victim, WARM_UP_SAMPLES);
    const phases: Phase[] = [];
    const run = async (name: string, attack?: Attack) => {
      const started = Date.now();
      const p = await phase(name, environment, send, victim, pid, attack);
      phases.push(p);
      console.log(`${mode}: ${describe(p)} (${Math.round((Date.now() - started) / 1000)} s)`);
    };
    await run('quiet (victim alone)');
    for (const ordinary of ORDINARY_PHASES) await run(ordinary.name, ordinary);
    for (const attack of ATTACKS) await run(attack.name, attack);
    return phases;
  } finally {
    if (server !== undefined && server.child.exitCode === null) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const ms = (n: number) => n.toFixed(1);
const describe = (p: Phase) =>
  `${p.name}: p50 ${ms(p.p50)} ms, p99 ${ms(p.p99)} ms, max ${ms(p.max)} ms, ${p.attackerRequests} attacker requests, ${p.cpuSeconds.toFixed(2)} s CPU${p.error === undefined ? '' : `; ERROR ${p.error}`}`;

/** The phases as a plain table, and whether every attack kept the victim's p99 within 3× of its ordinary neighbour's. */
function report(mode: string, phases: readonly Phase[]): boolean {
  const quiet = phases[0];
  const baselines = { events: phases[1], batches: phases[2] };
  const baselineOf = (p: Phase) => (p.baseline === undefined ? undefined : baselines[p.baseline]);
  const ratio = (p: Phase, base: Phase | undefined) =>
    (p.error !== undefined && p.p99 === 0) || !base || base.p99 === 0 ? '—' : (p.p99 / base.p99).toFixed(2);
  const rows = phases.map((p, i) => [
    p.name,
    ms(p.p50),
    ms(p.p99),
    ms(p.max),
    ratio(p, baselineOf(p)),
    ratio(p, quiet),
    i === 0 ? '—' : String(p.attackerRequests),
    p.cpuSeconds.toFixed(2),
    i === 0 || p.attackerRequests === 0 ? '—' : ((p.cpuSeconds * 1000) / p.attackerRequests).toFixed(2),
    p.error?.slice(0, 100) ?? '',
  ]);
  const header = [
    'phase',
    'p50 ms',
    'p99 ms',
    'max ms',
    'p99 / its ordinary',
    'p99 / quiet',
    'attacker requests',
    'service CPU s',
    'CPU ms / attacker request',
    'error',
  ];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, c) => (c === 0 || c === header.length - 1 ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number))).join(' | ')} |`;
  console.log(`\n${mode}: victim latency per phase (${SAMPLES} single events one at a time; the neighbour in ${LOOPS} loops)`);
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  const failing = phases.slice(1 + ORDINARY_PHASES.length).filter((p) => {
    const base = baselineOf(p);
    return p.error !== undefined || base === undefined || p.p99 > 3 * base.p99;
  });
  const pass = [quiet, baselines.events, baselines.batches].every((p) => p !== undefined && p.error === undefined) && failing.length === 0;
  console.log(
    `${mode}: ${pass ? 'PASS' : 'FAIL'}: every attack's victim p99 ≤ 3× its ordinary neighbour's p99 (single events ${ms(3 * (baselines.events?.p99 ?? 0))} ms, batches ${ms(3 * (baselines.batches?.p99 ?? 0))} ms)` +
      (failing.length === 0
        ? ''
        : `; not met: ${failing.map((p) => `${p.name} (${p.error === undefined ? `${ratio(p, baselineOf(p))}×` : 'error'})`).join('; ')}`),
  );
  return pass;
}

/** PostgreSQL and Redis answer, or why not. */
async function scaleOutReachable(): Promise<string | undefined> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1, connectionTimeoutMillis: 3000 });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await pool.query('select 1');
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (err) {
    return messageOf(err);
  } finally {
    await pool.end();
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'vigil-noisy-'));
  const plansFile = join(work, 'plans.json');
  writeFileSync(plansFile, PLANS);
  const receiver = await new WebhookReceiver().start();
  const verdicts: string[] = [];
  try {
    for (const mode of MODES) {
      if (mode === 'embedded') {
        verdicts.push(`embedded: ${report(mode, await runMode(mode, {}, plansFile, receiver)) ? 'PASS' : 'FAIL'}`);
      } else if (mode === 'scale-out') {
        const unreachable = await scaleOutReachable();
        if (unreachable !== undefined) {
          verdicts.push(`scale-out: not run (PostgreSQL or Redis unreachable: ${unreachable})`);
          continue;
        }
        const schema = `vigil_noisy_${randomBytes(4).toString('hex')}`;
        const prefix = `vigil-noisy:${schema}:`;
        const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
        await admin.query(`create schema "${schema}"`);
        try {
          const extra = { VIGIL_DATABASE_URL: withSchema(PG_URL, schema), VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: prefix };
          verdicts.push(`scale-out: ${report(mode, await runMode(mode, extra, plansFile, receiver)) ? 'PASS' : 'FAIL'}`);
        } finally {
          await admin.query(`drop schema if exists "${schema}" cascade`).finally(() => admin.end());
          const redis = new Redis(REDIS_URL);
          await deleteKeysWithPrefix(redis, prefix);
          redis.disconnect();
        }
      } else throw new Error(`BENCH_MODES: unknown mode "${mode}" (embedded, scale-out)`);
    }
  } finally {
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`\n${verdicts.join('\n')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
