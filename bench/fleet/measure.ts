/**
 * What one run cost, component by component: CPU of every process from /proc (sampled each
 * second so a process that dies mid-run keeps what it used), PostgreSQL's WAL position and the
 * run's schema size, Redis's INFO of every cluster node, the instances' own /metrics, and
 * loopback bytes.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type pg from 'pg';

/** Linux's USER_HZ: /proc's CPU times are in these ticks. */
const TICKS_PER_SECOND = 100;

export type Group = 'instances' | 'haproxy' | 'redis' | 'pg-backends' | 'pg-background';

async function procCpuSeconds(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** rchar + wchar: every byte through read/write system calls, sockets included. */
export async function procIoBytes(pid: number): Promise<number | undefined> {
  const io = await readFile(`/proc/${pid}/io`, 'utf8').catch(() => undefined);
  if (io === undefined) return undefined;
  const get = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(io)?.[1] ?? 0);
  return get('rchar') + get('wchar');
}

/**
 * CPU seconds per group between start() and stop(). A process first seen after start() counts
 * from zero (a PostgreSQL backend opened mid-run, an instance restarted after a kill); one that
 * exits keeps its last reading.
 */
export class CpuTracker {
  private readonly seen = new Map<number, { group: Group; first: number; last: number }>();
  private timer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(private readonly pids: () => Promise<[Group, number][]>) {}

  private async poll(): Promise<void> {
    for (const [group, pid] of await this.pids()) {
      const now = await procCpuSeconds(pid);
      if (now === undefined) continue;
      const known = this.seen.get(pid);
      if (known) known.last = now;
      else this.seen.set(pid, { group, first: this.started ? 0 : now, last: now });
    }
  }

  async start(): Promise<void> {
    await this.poll();
    this.started = true;
    this.timer = setInterval(() => void this.poll(), 1000);
  }

  async stop(): Promise<Record<Group, number>> {
    clearInterval(this.timer);
    await this.poll();
    const out: Record<Group, number> = { instances: 0, haproxy: 0, redis: 0, 'pg-backends': 0, 'pg-background': 0 };
    for (const { group, first, last } of this.seen.values()) out[group] += last - first;
    return out;
  }
}

export interface RedisNodeInfo {
  readonly port: number;
  readonly role: string;
  readonly calls: Record<string, number>;
  readonly cpuSeconds: number;
  readonly usedMemory: number;
  readonly keys: number;
}

export function redisInfo(port: number): RedisNodeInfo | undefined {
  const run = spawnSync('redis-cli', ['-p', String(port), 'info', 'everything'], { encoding: 'utf8', timeout: 3000 });
  if (run.status !== 0 || !run.stdout.includes('redis_version')) return undefined;
  const text = run.stdout;
  const num = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
  const calls: Record<string, number> = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1] as string] = Number(m[2]);
  let keys = 0;
  for (const m of text.matchAll(/^db\d+:keys=(\d+)/gm)) keys += Number(m[1]);
  return {
    port,
    role: /^role:(\w+)/m.exec(text)?.[1] ?? 'unknown',
    calls,
    cpuSeconds: num('used_cpu_sys') + num('used_cpu_user'),
    usedMemory: num('used_memory'),
    keys,
  };
}

export interface PgSample {
  readonly walBytes: number;
  readonly tableBytes: Record<string, number>;
  readonly rows: number;
}

export async function pgSample(admin: pg.Pool, schema: string): Promise<PgSample> {
  const wal = await admin.query<{ b: string }>(`select (pg_current_wal_lsn() - '0/0')::text as b`);
  const sizes = await admin.query<{ name: string; bytes: string }>(
    `select c.relname as name, pg_total_relation_size(c.oid)::text as bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind in ('r', 'm')`,
    [schema],
  );
  const rows = await admin.query<{ n: string }>(`select count(*)::text as n from "${schema}".events`).catch(() => ({ rows: [{ n: '0' }] }));
  return {
    walBytes: Number(wal.rows[0]?.b ?? 0),
    tableBytes: Object.fromEntries(sizes.rows.map((r) => [r.name, Number(r.bytes)])),
    rows: Number(rows.rows[0]?.n ?? 0),
  };
}

/** The pids of this run's PostgreSQL backends (by application_name) and of the server's shared background writers. */
export async function pgPids(admin: pg.Pool, applicationName: string): Promise<[Group, number][]> {
  const { rows } = await admin
    .query<{ pid: number; backend_type: string; application_name: string }>('select pid, backend_type, application_name from pg_stat_activity')
    .catch(() => ({ rows: [] as { pid: number; backend_type: string; application_name: string }[] }));
  const out: [Group, number][] = [];
  for (const r of rows) {
    if (r.application_name === applicationName) out.push(['pg-backends', r.pid]);
    else if (['walwriter', 'checkpointer', 'background writer'].includes(r.backend_type)) out.push(['pg-background', r.pid]);
  }
  return out;
}

export interface CommitMetrics {
  commitSeconds: number;
  commits: number;
  /** Cumulative commit counts per upper bound (s). */
  buckets: Map<number, number>;
  groupEvents: number;
  groups: number;
}

/** The commit histograms of one instance's /metrics (successful commits), or undefined if it does not answer. */
export async function commitMetrics(port: number): Promise<CommitMetrics | undefined> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(3000) })
    .then((r) => (r.ok ? r.text() : undefined))
    .catch(() => undefined);
  if (text === undefined) return undefined;
  const one = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(/^vigil_commit_duration_seconds_bucket\{le="([^"]+)",ok="true"\} (\d+)/gm))
    buckets.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return {
    commitSeconds: one(/^vigil_commit_duration_seconds_sum\{ok="true"\} (\S+)/m),
    commits: one(/^vigil_commit_duration_seconds_count\{ok="true"\} (\S+)/m),
    buckets,
    groupEvents: one(/^vigil_commit_group_events_sum (\S+)/m),
    groups: one(/^vigil_commit_group_events_count (\S+)/m),
  };
}

/** `after - before` summed over the instances that answered both times. */
export function commitDelta(before: (CommitMetrics | undefined)[], after: (CommitMetrics | undefined)[]): CommitMetrics {
  const out: CommitMetrics = { commitSeconds: 0, commits: 0, buckets: new Map(), groupEvents: 0, groups: 0 };
  after.forEach((a, i) => {
    const b = before[i];
    if (!a || !b) return;
    out.commitSeconds += a.commitSeconds - b.commitSeconds;
    out.commits += a.commits - b.commits;
    out.groupEvents += a.groupEvents - b.groupEvents;
    out.groups += a.groups - b.groups;
    for (const [le, n] of a.buckets) out.buckets.set(le, (out.buckets.get(le) ?? 0) + n - (b.buckets.get(le) ?? 0));
  });
  return out;
}

/** The upper bound (ms) of the histogram bucket holding quantile q. */
export function bucketQuantileMs(m: CommitMetrics, q: number): number | undefined {
  const entries = [...m.buckets.entries()].sort((a, b) => a[0] - b[0]);
  const total = entries.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  return (entries.find(([, n]) => n >= q * total)?.[0] ?? Infinity) * 1000;
}

/** Bytes received + sent on the loopback interface (every process on the machine). */
export async function loopbackBytes(): Promise<number> {
  const dev = await readFile('/proc/net/dev', 'utf8');
  const line = dev.split('\n').find((l) => l.trim().startsWith('lo:'));
  const f = line?.split(':')[1]?.trim().split(/\s+/) ?? [];
  return Number(f[0] ?? 0) + Number(f[8] ?? 0);
}

export async function loadAverage(): Promise<string> {
  return (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
}
