import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const ADMIN = 'process-test-admin-token-0123';
const ROOT = new URL('../../', import.meta.url).pathname;

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Plans with the default batch sizes but rate limits and caps too high to matter. */
export function roomyPlans(dir: string): string {
  const file = join(dir, 'plans.json');
  const high = { rpm: 100_000_000, eps: 100_000_000, monthly_cap: 100_000_000 };
  writeFileSync(file, JSON.stringify({ plans: { pro: high, business: high } }));
  return file;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface Service {
  readonly child: ChildProcess;
  readonly base: string;
  /** stdout lines so far. */
  readonly lines: string[];
  readonly stderr: string[];
  /** Resolves with the exit code (or the signal name). */
  readonly exited: Promise<number | string>;
}

/** Runs `node --import tsx src/main.ts` and resolves once it logged "vigil ready". */
export async function startService(dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      VIGIL_PORT: String(port),
      VIGIL_HOST: '127.0.0.1',
      VIGIL_DATA_DIR: dataDir,
      VIGIL_ADMIN_TOKEN: ADMIN,
      VIGIL_IP_LIMITS: '127.0.0.1/32=1000000',
      VIGIL_PLANS_FILE: roomyPlans(dataDir),
      VIGIL_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (l) => stderr.push(l));
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      // Request logs are many; keep the ones tests read (first-start output and lifecycle messages).
      if (!line.includes('"reqId"')) lines.push(line);
      if (line.includes('"vigil ready"')) resolve();
    });
    void exited.then((code) => reject(new Error(`service exited (${code}) before it was ready: ${stderr.join('\n')}`)));
  });
  await ready;
  return { child, base: `http://127.0.0.1:${port}`, lines, stderr, exited };
}

type Json = any;

export async function api(base: string, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Creates an account and a secret key through the admin API. */
export async function provision(base: string, plan: string): Promise<{ accountId: string; key: string }> {
  const acct = await api(base, 'POST', '/admin/accounts', ADMIN, { name: 'crash-test', plan });
  if (acct.status !== 201) throw new Error(`create account: ${acct.status} ${JSON.stringify(acct.json)}`);
  const key = await api(base, 'POST', `/admin/accounts/${acct.json.id}/keys`, ADMIN, { kind: 'secret' });
  if (key.status !== 201) throw new Error(`create key: ${key.status}`);
  return { accountId: acct.json.id, key: key.json.key };
}

/** Every stored event of the key's account: id -> event_id. */
export async function storedEvents(base: string, key: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const res = await api(base, 'GET', `/v1/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`, key);
    if (res.status !== 200) throw new Error(`list: ${res.status}`);
    for (const e of res.json.data) out.set(e.id, e.event_id);
    cursor = res.json.next_cursor;
  } while (cursor);
  return out;
}

export interface Traffic {
  /** Resolves when every worker stopped (the service went away or `stop()` was called). */
  readonly done: Promise<void>;
  /** Event ids answered 202, with their event_id. */
  readonly acked: Map<string, string>;
  stop(): void;
  /** Resolves once at least n events were acknowledged. */
  whenAcked(n: number): Promise<void>;
}

/**
 * `workers` concurrent clients sending single events and batches of 10 with unique
 * event_ids until the service stops answering.
 */
export function sendTraffic(base: string, key: string, workers = 12): Traffic {
  const acked = new Map<string, string>();
  let stopped = false;
  const waiters: { n: number; resolve: () => void }[] = [];
  const note = () => {
    for (const w of [...waiters]) {
      if (acked.size < w.n) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const worker = async (w: number) => {
    for (let i = 0; !stopped; i++) {
      const batch = i % 4 === 3;
      const events = Array.from({ length: batch ? 10 : 1 }, (_, j) => ({ event: 'custom.crash.test', actor_id: `w${w}`, event_id: `w${w}-r${i}-e${j}` }));
      let res: { status: number; json: Json };
      try {
        res = batch ? await api(base, 'POST', '/v1/events/batch', key, { events }) : await api(base, 'POST', '/v1/events', key, events[0]);
      } catch {
        return; // connection refused or reset: the service is gone
      }
      if (res.status !== 202) continue;
      const results = batch ? res.json.results : [res.json];
      results.forEach((r: { id: string }, j: number) => acked.set(r.id, events[j]?.event_id as string));
      note();
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, w) => worker(w))).then(() => undefined);
  return {
    done,
    acked,
    stop: () => (stopped = true),
    whenAcked: (n) => new Promise<void>((resolve) => (acked.size >= n ? resolve() : waiters.push({ n, resolve }))),
  };
}
