import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';
import { api } from '../../test/process/service.js';

const AGENT_ROOT = new URL('../', import.meta.url).pathname;
const FIXTURES = new URL('./fixtures/', import.meta.url).pathname;
const INFO = `${FIXTURES}containerd/container-info-privileged.json`;

export interface AgentProcess {
  readonly child: ChildProcess;
  readonly stderr: string[];
  readonly exited: Promise<number | string>;
}

/** A config with only the auth source, following `authLog`, and test-sized timers. */
export function writeAgentConfig(
  dir: string,
  server: string,
  key: string,
  authLog: string,
  extra: { batch_size?: number; containers?: Record<string, unknown> } = {},
): string {
  const file = join(dir, 'agent.yaml');
  const off = { enabled: false };
  writeFileSync(
    file,
    stringify({
      server,
      key,
      host: 'test-host',
      log_level: 'info',
      buffer: { path: join(dir, 'buffer.db'), max_events: 100_000 },
      sender: { batch_size: extra.batch_size ?? 100, backoff_base_ms: 100, backoff_max_ms: 2_000, request_timeout_ms: 5_000, idle_poll_ms: 100 },
      heartbeat: { enabled: false },
      sources: {
        auth: { enabled: true, paths: [authLog], poll_ms: 100 },
        journal: off,
        packages: off,
        log_integrity: off,
        files: off,
        ports: off,
        modules: off,
        firewall: off,
        processes: off,
        containers: extra.containers ?? off,
      },
    }),
  );
  return file;
}

/**
 * A `ctr` that answers like the real one: `events` prints `eventsFile` and stays subscribed,
 * `namespaces ls` and `tasks ls` print tables of the given running tasks, `containers info`
 * prints the privileged container's info. It logs its arguments.
 */
export function fakeCtr(dir: string, eventsFile: string, tasks: Record<string, string[]>): { command: string; calls(): string[] } {
  const command = join(dir, 'ctr');
  const calls = join(dir, 'calls.log');
  const table = (ids: string[]) => ['TASK    PID     STATUS', ...ids.map((id, i) => `${id}    ${3630 + i}    RUNNING`)].join('\\n');
  writeFileSync(
    command,
    [
      '#!/bin/sh',
      `echo "$*" >> '${calls}'`,
      'case "$*" in',
      `  *" events") cat '${eventsFile}'; exec sleep 600 ;;`,
      `  *"namespaces ls") printf 'NAME    LABELS\\n${Object.keys(tasks).join('\\n')}\\n' ;;`,
      ...Object.entries(tasks).map(([ns, ids]) => `  *"--namespace ${ns} tasks ls") printf '${table(ids)}\\n' ;;`),
      `  *"containers info "*) cat '${INFO}' ;;`,
      '  *) echo "ctr: not found" >&2; exit 1 ;;',
      'esac',
    ].join('\n') + '\n',
  );
  chmodSync(command, 0o755);
  return { command, calls: () => readFileSync(calls, 'utf8').trim().split('\n') };
}

/** `vigil-agent run --config FILE` from the TypeScript sources. */
export function startAgent(config: string): AgentProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'run', '--config', config], {
    cwd: AGENT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TZ: 'UTC' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, stderr, exited };
}

/** Runs the CLI to completion: exit code and stdout. */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      cwd: AGENT_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TZ: 'UTC', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** One sshd failure line per index, each distinct (user, address and port derive from the index). */
export function failureLine(i: number, at = new Date()): string {
  return `${at.toISOString()} test-host sshd[${1000 + (i % 30000)}]: Failed password for user${i} from 198.51.${Math.floor(i / 250) % 250}.${(i % 250) + 1} port ${10000 + i} ssh2`;
}

export function writeLines(path: string, from: number, to: number): void {
  let text = '';
  for (let i = from; i < to; i++) text += failureLine(i) + '\n';
  appendFileSync(path, text);
}

export interface StoredEvent {
  readonly id: string;
  readonly event: string;
  readonly event_id: string;
  readonly actor_id?: string;
  readonly ip?: string;
  readonly host?: string;
  readonly metadata?: Record<string, unknown>;
}

/** Every stored event of the key's account, through GET /v1/events. */
export async function listEvents(base: string, key: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  let cursor: string | null = null;
  do {
    const res = await api(base, 'GET', `/v1/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`, key);
    if (res.status !== 200) throw new Error(`list: ${res.status}`);
    out.push(...(res.json.data as StoredEvent[]));
    cursor = res.json.next_cursor;
  } while (cursor);
  return out;
}

/** Events the service answered as repeats of an already accepted event_id (its Prometheus counter). */
export async function duplicatesAnswered(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /^vigil_events_total\{outcome="duplicate"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a value, or throws after `ms` with the last state. */
export async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>, every = 250): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(every);
  }
}

/**
 * Lines written vs events stored: each line index must be stored exactly once, with the
 * user, address and port of its line.
 */
export function compare(
  written: number,
  stored: readonly StoredEvent[],
): { written: number; stored: number; distinctEventIds: number; missing: number[]; wrongContent: number } {
  const byUser = new Map<string, StoredEvent[]>();
  for (const e of stored) {
    if (e.event !== 'server.ssh.login.failure' || e.actor_id === undefined) continue;
    byUser.set(e.actor_id, [...(byUser.get(e.actor_id) ?? []), e]);
  }
  const missing: number[] = [];
  let wrongContent = 0;
  for (let i = 0; i < written; i++) {
    const events = byUser.get(`user${i}`) ?? [];
    if (events.length === 0) missing.push(i);
    for (const e of events) {
      const expectIp = `198.51.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;
      if (e.ip !== expectIp || e.metadata?.port !== 10000 + i || e.host !== 'test-host') wrongContent++;
    }
  }
  return { written, stored: stored.length, distinctEventIds: new Set(stored.map((e) => e.event_id)).size, missing, wrongContent };
}
