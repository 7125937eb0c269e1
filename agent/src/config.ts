import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parse as parseYaml } from 'yaml';
import { isLogLevel, type LogLevel } from './log.js';
import type { RedactConfig } from './redact.js';

/** Whether a source runs: always, never, or when what it reads exists on this host. */
export type Enabled = boolean | 'auto';

export interface TailSourceConfig {
  readonly enabled: Enabled;
  readonly paths: readonly string[];
  readonly poll_ms: number;
}
export interface PollSourceConfig {
  readonly enabled: Enabled;
  readonly interval_s: number;
}

export interface AgentConfig {
  readonly server: string;
  readonly key: string;
  readonly host: string;
  readonly log_level: LogLevel;
  readonly buffer: { readonly path: string; readonly max_events: number };
  readonly sender: {
    readonly batch_size: number;
    readonly backoff_base_ms: number;
    readonly backoff_max_ms: number;
    readonly request_timeout_ms: number;
    readonly idle_poll_ms: number;
  };
  readonly heartbeat: { readonly enabled: boolean; readonly interval_s: number };
  readonly redact: RedactConfig;
  readonly sources: {
    readonly auth: TailSourceConfig;
    readonly journal: { readonly enabled: Enabled; readonly command: string };
    readonly packages: TailSourceConfig;
    readonly log_integrity: PollSourceConfig & { readonly paths: readonly string[] };
    readonly files: PollSourceConfig & { readonly paths: readonly string[]; readonly max_file_bytes: number };
    readonly ports: PollSourceConfig & { readonly proc_net: string };
    readonly modules: PollSourceConfig & { readonly proc_modules: string };
    readonly firewall: PollSourceConfig;
    readonly processes: PollSourceConfig & { readonly proc: string; readonly repeat_after_s: number };
    readonly containers: {
      readonly enabled: Enabled;
      readonly sockets: readonly string[];
      readonly containerd_sockets: readonly string[];
      readonly ctr_command: string;
    };
  };
}

export const AUTH_LOGS = ['/var/log/auth.log', '/var/log/secure'];

/** Watched for changes by default: accounts, sudo rules, SSH keys, cron, systemd units, preload and PAM. */
export const DEFAULT_WATCHED_PATHS = [
  '/etc/passwd',
  '/etc/shadow',
  '/etc/group',
  '/etc/gshadow',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh/sshd_config',
  '/root/.ssh/authorized_keys',
  '/home/*/.ssh/authorized_keys',
  '/etc/crontab',
  '/etc/cron.d',
  '/etc/cron.hourly',
  '/etc/cron.daily',
  '/var/spool/cron',
  '/etc/systemd/system',
  '/etc/ld.so.preload',
  '/etc/pam.d',
];

export const DEFAULTS: AgentConfig = {
  server: '',
  key: '',
  host: hostname(),
  log_level: 'info',
  buffer: { path: '/var/lib/vigil-agent/buffer.db', max_events: 200_000 },
  sender: { batch_size: 100, backoff_base_ms: 1_000, backoff_max_ms: 300_000, request_timeout_ms: 15_000, idle_poll_ms: 1_000 },
  heartbeat: { enabled: true, interval_s: 3_600 },
  redact: { command_secrets: true, extra_flags: [] },
  sources: {
    auth: { enabled: 'auto', paths: AUTH_LOGS, poll_ms: 1_000 },
    journal: { enabled: 'auto', command: 'journalctl' },
    packages: { enabled: 'auto', paths: ['/var/log/dpkg.log', '/var/log/dnf.rpm.log'], poll_ms: 5_000 },
    log_integrity: { enabled: 'auto', interval_s: 10, paths: [...AUTH_LOGS, '/var/log/syslog', '/var/log/messages', '/var/log/wtmp', '/var/log/btmp'] },
    files: { enabled: true, interval_s: 60, paths: DEFAULT_WATCHED_PATHS, max_file_bytes: 16 * 1024 * 1024 },
    ports: { enabled: 'auto', interval_s: 30, proc_net: '/proc/net' },
    modules: { enabled: 'auto', interval_s: 60, proc_modules: '/proc/modules' },
    firewall: { enabled: 'auto', interval_s: 60 },
    processes: { enabled: 'auto', interval_s: 5, proc: '/proc', repeat_after_s: 86_400 },
    containers: {
      enabled: 'auto',
      sockets: ['/var/run/docker.sock'],
      containerd_sockets: ['/run/containerd/containerd.sock', '/run/k3s/containerd/containerd.sock'],
      ctr_command: 'ctr',
    },
  },
};

export class ConfigError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge of plain objects; arrays and scalars replace. */
function merge(base: unknown, over: unknown, path: string): unknown {
  if (over === undefined) return base;
  if (!isObject(base)) return over;
  if (!isObject(over)) throw new ConfigError(`${path || 'config'} must be an object`);
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (!(k in base)) throw new ConfigError(`unknown setting ${path ? path + '.' : ''}${k}`);
    out[k] = merge(base[k], v, path ? `${path}.${k}` : k);
  }
  return out;
}

/** Environment overrides, for containers and one-off runs. */
const ENV: readonly [string, string, 'string' | 'number' | 'boolean'][] = [
  ['VIGIL_AGENT_SERVER', 'server', 'string'],
  ['VIGIL_AGENT_KEY', 'key', 'string'],
  ['VIGIL_AGENT_HOST', 'host', 'string'],
  ['VIGIL_AGENT_LOG_LEVEL', 'log_level', 'string'],
  ['VIGIL_AGENT_BUFFER_PATH', 'buffer.path', 'string'],
  ['VIGIL_AGENT_BUFFER_MAX_EVENTS', 'buffer.max_events', 'number'],
  ['VIGIL_AGENT_BATCH_SIZE', 'sender.batch_size', 'number'],
  ['VIGIL_AGENT_HEARTBEAT_INTERVAL_S', 'heartbeat.interval_s', 'number'],
];

function envOverrides(env: NodeJS.ProcessEnv): Json {
  const out: Json = {};
  for (const [name, path, kind] of ENV) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = kind === 'number' ? Number(raw) : kind === 'boolean' ? raw === 'true' : raw;
    if (kind === 'number' && !Number.isFinite(value)) throw new ConfigError(`${name} must be a number, got "${raw}"`);
    const keys = path.split('.');
    let at = out;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Json;
    at[keys[keys.length - 1] as string] = value;
  }
  return out;
}

function readFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  try {
    return file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}`);
  }
}

function check(cfg: AgentConfig, needServer: boolean): void {
  const problems: string[] = [];
  if (needServer) {
    if (!/^https?:\/\/[^/]+/.test(cfg.server)) problems.push('server must be an http(s) URL');
    if (!cfg.key) problems.push('key is required (config key, or VIGIL_AGENT_KEY)');
  }
  if (!cfg.host || cfg.host.length > 255) problems.push('host must be a non-empty name');
  if (!isLogLevel(cfg.log_level)) problems.push('log_level must be debug, info, warn or error');
  const positive: [string, number][] = [
    ['buffer.max_events', cfg.buffer.max_events],
    ['sender.batch_size', cfg.sender.batch_size],
    ['sender.backoff_base_ms', cfg.sender.backoff_base_ms],
    ['sender.backoff_max_ms', cfg.sender.backoff_max_ms],
    ['sender.request_timeout_ms', cfg.sender.request_timeout_ms],
    ['sender.idle_poll_ms', cfg.sender.idle_poll_ms],
    ['heartbeat.interval_s', cfg.heartbeat.interval_s],
  ];
  for (const [name, v] of positive) if (typeof v !== 'number' || !(v > 0)) problems.push(`${name} must be a positive number`);
  if (cfg.sender.batch_size > 100) problems.push('sender.batch_size must be at most 100 (the largest plan batch)');
  for (const [name, src] of Object.entries(cfg.sources)) {
    const enabled = (src as { enabled: unknown }).enabled;
    if (enabled !== true && enabled !== false && enabled !== 'auto') problems.push(`sources.${name}.enabled must be true, false or auto`);
  }
  if (typeof cfg.redact.command_secrets !== 'boolean') problems.push('redact.command_secrets must be true or false');
  if (!Array.isArray(cfg.redact.extra_flags) || !cfg.redact.extra_flags.every((f) => typeof f === 'string' && /^-{0,2}[A-Za-z][\w.-]{0,63}$/.test(f)))
    problems.push('redact.extra_flags must be a list of option names such as --vault-pass');
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
}

/** Defaults, then the file (YAML, or JSON by extension), then VIGIL_AGENT_* variables; validated. */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env, needServer = true): AgentConfig {
  let merged = merge(DEFAULTS, file === undefined ? undefined : (readFile(file) ?? {}), '');
  merged = merge(merged, envOverrides(env), '');
  const cfg = merged as AgentConfig;
  if (typeof cfg.key === 'string' && cfg.key.startsWith('file:')) {
    try {
      (cfg as { key: string }).key = readFileSync(cfg.key.slice(5), 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`cannot read the key file ${cfg.key.slice(5)}: ${(err as Error).message}`);
    }
  }
  (cfg as { server: string }).server = cfg.server.replace(/\/+$/, '');
  check(cfg, needServer);
  return cfg;
}
