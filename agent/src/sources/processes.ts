import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { eventIdOf, makeEvent, type AgentEvent } from '../event.js';
import { every, type Source, type SourceContext } from './source.js';

export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly uid: number;
  readonly exe: string | undefined;
  readonly argv: readonly string[];
  /** Clock ticks since boot: tells a new process from a recycled pid. */
  readonly start: string;
}

const TEMP_DIRS = ['/tmp/', '/var/tmp/', '/dev/shm/'];
/**
 * Programs whose command lines are worth sending for the service's command classification:
 * shells, interpreters, fetchers, network relays, decoders, known miners.
 */
const WORTH_SENDING = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'ash',
  'python',
  'python2',
  'python3',
  'perl',
  'ruby',
  'php',
  'lua',
  'node',
  'curl',
  'wget',
  'nc',
  'ncat',
  'netcat',
  'nc.traditional',
  'nc.openbsd',
  'socat',
  'telnet',
  'base64',
  'xmrig',
  'minerd',
  'cpuminer',
  'pwsh',
]);

const name = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/**
 * What only the host can tell about a process: an executable in a world-writable temporary
 * directory, or one deleted after it started. The command line itself is judged by the
 * service (reverse shells, download-and-run, miners, encoded commands).
 */
export function hostVerdict(p: ProcessInfo): string | undefined {
  if (p.exe === undefined) return undefined;
  if (p.exe.endsWith(' (deleted)')) return 'deleted_executable';
  if (TEMP_DIRS.some((d) => p.exe?.startsWith(d))) return 'executable_in_temp_dir';
  return undefined;
}

export function isWorthSending(p: ProcessInfo): boolean {
  const argv0 = p.argv[0] ?? '';
  return WORTH_SENDING.has(name(argv0)) || (p.exe !== undefined && WORTH_SENDING.has(name(p.exe))) || TEMP_DIRS.some((d) => argv0.startsWith(d));
}

export function readProcess(proc: string, pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`${proc}/${pid}/stat`, 'utf8');
    // The command name in parentheses may itself contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`${proc}/${pid}/status`, 'utf8');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
    const argv = readFileSync(`${proc}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    let exe: string | undefined;
    try {
      exe = readlinkSync(`${proc}/${pid}/exe`);
    } catch {
      exe = undefined; // kernel thread, or another user's process without privilege
    }
    return { pid, ppid: Number(fields[1]), uid, exe, argv, start: fields[19] as string };
  } catch {
    return undefined;
  }
}

/** Events for one newly seen process: `server.process.suspicious` on a host verdict, else `executed` for the programs worth sending. */
export function processEvents(host: string, p: ProcessInfo, at: number, reportAll: boolean): AgentEvent[] {
  const verdict = hostVerdict(p);
  if (verdict === undefined && !reportAll && !isWorthSending(p)) return [];
  if (p.argv.length === 0) return [];
  return [
    makeEvent({
      event: verdict === undefined ? 'server.process.executed' : 'server.process.suspicious',
      event_id: eventIdOf(host, 'process', p.pid, p.start),
      at,
      host,
      metadata: { source: 'processes', pid: p.pid, ppid: p.ppid, uid: p.uid, exe: p.exe, command: p.argv.join(' ').slice(0, 4096), technique: verdict },
    }),
  ];
}

/**
 * Processes started since the last look, from /proc (polled: a process that lives shorter
 * than the interval can be missed; auditd or eBPF would see every exec).
 */
export function processesSource(ctx: SourceContext): Source {
  const cfg = ctx.config.sources.processes;
  let seen: Map<number, string> | undefined;
  // The same command line again within repeat_after_s (a cron job's shell every minute) is sent once.
  const lastSent = new Map<string, number>();
  const isRepeat = (e: AgentEvent, now: number): boolean => {
    if (e.event !== 'server.process.executed') return false;
    const key = `${String(e.metadata.uid)}|${String(e.metadata.exe)}|${String(e.metadata.command)}`;
    const at = lastSent.get(key);
    if (at !== undefined && now - at < cfg.repeat_after_s * 1000) return true;
    lastSent.delete(key);
    lastSent.set(key, now);
    if (lastSent.size > 10_000) lastSent.delete(lastSent.keys().next().value as string);
    return false;
  };
  let loop: { stop(): Promise<void> } | undefined;
  const check = () => {
    const now = Date.now();
    const current = new Map<number, string>();
    const events: AgentEvent[] = [];
    for (const entry of readdirSync(cfg.proc)) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      if (pid === process.pid) continue;
      let start: string | undefined;
      try {
        const stat = readFileSync(`${cfg.proc}/${pid}/stat`, 'utf8');
        start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      } catch {
        continue;
      }
      if (start === undefined) continue;
      current.set(pid, start);
      if (seen === undefined || seen.get(pid) === start) continue;
      const info = readProcess(cfg.proc, pid);
      if (info !== undefined) events.push(...processEvents(ctx.host, info, now, false).filter((e) => !isRepeat(e, now)));
    }
    seen = current;
    // A process start cannot be read again later: while the buffer is full it is counted as dropped.
    if (ctx.buffer.full) ctx.buffer.noteSkippedWhileFull(events.length);
    else ctx.buffer.append(events);
  };
  return {
    name: 'processes',
    start() {
      loop = every(cfg.interval_s * 1000, ctx, 'processes', check, true);
    },
    async stop() {
      await loop?.stop();
    },
  };
}
