import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseAddress, parseCidr, type Cidr } from '../util/ip.js';
import type { IpLimitOverride } from '../limits/ip-limits.js';
import { ENTRY_PLAN, loadPlans, PlanFileError, planNamed, type PlanTable } from '../limits/plans.js';
import { errorCode } from '../util/caught.js';
import { HOUR_MS, SECOND_MS } from '../util/duration.js';
import { memberOf } from '../util/member-of.js';
import { domainProblem, issuerProblem, SSO_LIMITS, ssoRoleProblem, type InstanceSso } from '../team/sso-settings.js';
import type { Role } from '../event/account.js';
import { MASTER_SECRET_MIN_LENGTH } from '../privacy/pseudonym.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl?: string;
  readonly redisUrl?: string;
  readonly redisPrefix: string;
  /** `redisUrl` names one node of a Redis Cluster. */
  readonly redisCluster: boolean;
  readonly adminToken?: string;
  /** Bearer token /metrics requires when set. */
  readonly metricsToken?: string;
  /** /metrics is served on this port (and metricsHost) instead of the public one when set. */
  readonly metricsPort?: number;
  readonly metricsHost: string;
  readonly trustProxy: readonly string[];
  readonly plans: PlanTable;
  readonly initialPlan: string;
  readonly ipLimitPerMinute: number;
  readonly ipLimits: readonly IpLimitOverride[];
  readonly maxConnectionsPerIp: number;
  /** Requests one keep-alive connection may carry before the server asks the client to reconnect; 0 = no limit. */
  readonly maxRequestsPerSocket: number;
  /** VIGIL_FEEDS_DIR, or `feeds` in the data directory (absent with an in-memory database). */
  readonly feedsDir?: string;
  /** True when feedsDir is the data directory's: the service creates it with the default feeds.json. */
  readonly feedsDirIsDefault: boolean;
  readonly geoipCity?: string;
  readonly geoipAsn?: string;
  readonly breachedHashFile?: string;
  readonly maxEventBytes: number;
  readonly maxBatchBytes: number;
  readonly commitWindowMs: number;
  readonly commitMaxEvents: number;
  /** How long an instance holds a data-subject erasure job without news before another takes it over. */
  readonly subjectJobLeaseMs: number;
  /** PostgreSQL: an erasure rewrites the relations it wrote (VACUUM FULL), so no erased byte stays in their files. */
  readonly erasureRewrite: boolean;
  /** Body bytes of ingestion requests admitted into the pipeline at once (src/http/ingest-admission.ts). */
  readonly ingestInFlightBytes: number;
  /** Ingestion requests that may wait for admission at once; the next one is answered 503 OVERLOADED. */
  readonly ingestMaxWaiting: number;
  /** Ingestion requests admitted into the pipeline at once (besides the bytes' budget). */
  readonly ingestMaxInFlight: number;
  /** The longest an ingestion request is expected to wait for admission (ms) before it is answered 503 OVERLOADED instead; 0: no bound. */
  readonly ingestMaxWaitMs: number;
  readonly sqliteSynchronous: 'full' | 'normal';
  readonly logLevel: string;
  readonly retentionEnabled: boolean;
  /** Master secret of the accounts' pseudonym keys (src/privacy/pseudonym.ts); without it no pseudonym can be made. */
  readonly pseudonymSecret?: string;
  /** Threat-model saves and deletions per account and minute. */
  readonly threatModelChangesPerMinute: number;
  readonly webhooks: WebhookConfig;
  readonly team: TeamConfig;
}

/** People and sign-in. */
export interface TeamConfig {
  /** The dashboard may also be signed in to with an account's secret key (off unless the operator turns it on). */
  readonly keySignIn: boolean;
  /**
   * Where people reach this service (`https://vigil.example.com`, no trailing slash): the base of
   * the links in invitations and password resets, and of the single sign-on redirect URI. Unset,
   * those links are relative (the redirect URI is built from the request's address).
   */
  readonly publicUrl?: string;
  /** Single sign-on for the whole instance (VIGIL_OIDC_ISSUER and the rest), when configured. */
  readonly oidc?: InstanceSso;
  /** Providers may be reached over http on a loopback address (a provider on the same machine). */
  readonly ssoAllowHttpLoopback: boolean;
  /**
   * Address ranges a provider named in an account's own single sign-on settings may be on besides
   * public addresses (VIGIL_SSO_ALLOW_CIDRS), e.g. a company's identity provider on a private network.
   */
  readonly ssoAllowCidrs: readonly Cidr[];
  /** Mail for invitations and password resets; without it the links are handed to whoever asked. */
  readonly smtp?: SmtpConfig;
}

export interface SmtpConfig {
  /** `smtp://user:pass@host:port` or `smtps://…` (the password is never logged). */
  readonly url: string;
  readonly from: string;
}

export interface WebhookConfig {
  /** Ranges webhook URLs may reach although they are loopback, private or link-local. */
  readonly allowCidrs: readonly Cidr[];
  /** One delivery attempt, connection to last byte. */
  readonly timeoutMs: number;
  /** How often the dispatcher looks for due deliveries. */
  readonly pollMs: number;
  readonly maxEndpointsPerAccount: number;
  /** Delivery attempts per account and minute (per instance); more wait for the next minute. */
  readonly deliveriesPerMinute: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const member = memberOf(allowed, raw);
  if (member === undefined) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return member;
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function cidrList(env: Env, name: string): string[] {
  const raw = optional(env, name);
  if (!raw) return [];
  return raw.split(',').map((part) => {
    const item = part.trim();
    if (parseCidr(item) === undefined) throw new ConfigError(name, `must be a comma-separated list of IP addresses or CIDRs; "${item}" is neither`);
    return item;
  });
}

function ipLimits(env: Env): IpLimitOverride[] {
  const raw = optional(env, 'VIGIL_IP_LIMITS');
  if (!raw) return [];
  return raw.split(',').map((part) => {
    const [cidr, value] = part.split('=').map((s) => s.trim());
    if (!cidr || !value || !/^\d+$/.test(value) || Number(value) < 1) {
      throw new ConfigError('VIGIL_IP_LIMITS', `must look like "127.0.0.1/32=1000000,10.0.0.0/8=6000"; "${part.trim()}" does not`);
    }
    const range = parseCidr(cidr);
    if (range?.bits === undefined) throw new ConfigError('VIGIL_IP_LIMITS', `"${cidr}" is not an IP address or CIDR`);
    return { cidr, range: { ...range, bits: range.bits }, perMinute: Number(value) };
  });
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = optional(env, name);
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')}`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')}, got "${parsed.protocol}//"`);
  return raw;
}

function path(env: Env, name: string, fallback?: string): string | undefined {
  const raw = optional(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  return isAbsolute(raw) ? raw : resolve(raw);
}

/** A path that must already exist as a file or directory (data files named by the operator). */
function existing(env: Env, name: string, kind: 'file' | 'directory' | 'file or directory'): string | undefined {
  const full = path(env, name);
  if (full === undefined) return undefined;
  let stats;
  try {
    stats = statSync(full);
  } catch (err) {
    throw new ConfigError(name, `must name an existing ${kind}; "${full}" cannot be read (${errorCode(err) ?? 'error'})`);
  }
  const fits = kind === 'file' ? stats.isFile() : kind === 'directory' ? stats.isDirectory() : stats.isFile() || stats.isDirectory();
  if (!fits) throw new ConfigError(name, `must name a ${kind}; "${full}" is not one`);
  return full;
}

/** The data directory may not exist yet (it is created), but must not be something else. */
function dataDir(env: Env): string {
  if (optional(env, 'VIGIL_DATA_DIR') === ':memory:') return ':memory:';
  const full = path(env, 'VIGIL_DATA_DIR', './data') as string;
  if (existsSync(full) && !statSync(full).isDirectory()) throw new ConfigError('VIGIL_DATA_DIR', `must be a directory (or not exist yet); "${full}" is a file`);
  return full;
}

function feedsDir(env: Env): { feedsDir?: string; feedsDirIsDefault: boolean } {
  const chosen = existing(env, 'VIGIL_FEEDS_DIR', 'directory');
  if (chosen !== undefined) return { feedsDir: chosen, feedsDirIsDefault: false };
  const data = dataDir(env);
  return data === ':memory:' ? { feedsDirIsDefault: false } : { feedsDir: join(data, 'feeds'), feedsDirIsDefault: true };
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

function host(env: Env, name = 'VIGIL_HOST', fallback = '0.0.0.0'): string {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (parseAddress(raw) === undefined && !HOST_NAME.test(raw))
    throw new ConfigError(name, `must be an IP address (0.0.0.0, ::, 127.0.0.1) or a host name, got "${raw}"`);
  return raw;
}

function redisPrefix(env: Env): string {
  const raw = optional(env, 'VIGIL_REDIS_PREFIX') ?? 'vigil:';
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(raw))
    throw new ConfigError('VIGIL_REDIS_PREFIX', `must be 1-64 characters of letters, digits, ':', '_', '.', '-', got "${raw}"`);
  return raw;
}

function redisCluster(env: Env): boolean {
  const on = oneOf(env, 'VIGIL_REDIS_CLUSTER', ['on', 'off'] as const, 'off') === 'on';
  if (on && optional(env, 'VIGIL_REDIS_URL') === undefined)
    throw new ConfigError('VIGIL_REDIS_CLUSTER', 'is on, so VIGIL_REDIS_URL must name one node of the cluster');
  return on;
}

function publicUrl(env: Env): string | undefined {
  const raw = url(env, 'VIGIL_PUBLIC_URL', ['http:', 'https:']);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '')
    throw new ConfigError('VIGIL_PUBLIC_URL', `must be the service's address without credentials, query or fragment, e.g. https://vigil.example.com`);
  return raw.replace(/\/+$/, '');
}

function smtp(env: Env): SmtpConfig | undefined {
  const address = url(env, 'VIGIL_SMTP_URL', ['smtp:', 'smtps:']);
  const from = optional(env, 'VIGIL_SMTP_FROM');
  if (address === undefined) {
    if (from !== undefined) throw new ConfigError('VIGIL_SMTP_FROM', 'is set but VIGIL_SMTP_URL is not: set both to send mail');
    return undefined;
  }
  if (from === undefined || !/^[^\s@<>]+@[^\s@<>]+$|^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(from))
    throw new ConfigError(
      'VIGIL_SMTP_FROM',
      'must be the sender address of the mail Vigil sends (vigil@example.com or "Vigil <vigil@example.com>") when VIGIL_SMTP_URL is set',
    );
  return { url: address, from };
}

const OIDC_VARIABLES = [
  'VIGIL_OIDC_CLIENT_ID',
  'VIGIL_OIDC_CLIENT_SECRET',
  'VIGIL_OIDC_ACCOUNT',
  'VIGIL_OIDC_ALLOWED_DOMAINS',
  'VIGIL_OIDC_ROLE_CLAIM',
  'VIGIL_OIDC_ROLE_MAP',
  'VIGIL_OIDC_DEFAULT_ROLE',
] as const;

function bounded(env: Env, name: string, max: number): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && raw.length > max) throw new ConfigError(name, `must be at most ${max} characters long`);
  return raw;
}

function required(env: Env, name: string, max: number): string {
  const raw = bounded(env, name, max);
  if (raw === undefined) throw new ConfigError(name, 'must be set when VIGIL_OIDC_ISSUER is');
  return raw;
}

const listOf = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** VIGIL_OIDC_ROLE_MAP: `claimvalue=role,...`. */
function roleMap(env: Env): Record<string, Role> {
  const map: Record<string, Role> = {};
  const items = listOf(bounded(env, 'VIGIL_OIDC_ROLE_MAP', SSO_LIMITS.mappings * (SSO_LIMITS.claimValue + 10)));
  if (items.length > SSO_LIMITS.mappings) throw new ConfigError('VIGIL_OIDC_ROLE_MAP', `may map at most ${SSO_LIMITS.mappings} values`);
  for (const item of items) {
    const eq = item.lastIndexOf('=');
    const value = item.slice(0, eq).trim();
    const role = item.slice(eq + 1).trim();
    if (eq <= 0 || value.length > SSO_LIMITS.claimValue)
      throw new ConfigError('VIGIL_OIDC_ROLE_MAP', `must look like "secops-admins=admin,secops=analyst"; "${item}" does not`);
    const problem = ssoRoleProblem(role);
    if (problem) throw new ConfigError('VIGIL_OIDC_ROLE_MAP', problem);
    map[value] = role as Role;
  }
  return map;
}

/** The instance's single sign-on: VIGIL_OIDC_ISSUER turns it on, and then the client and its account are required. */
function instanceSso(env: Env, allowHttpLoopback: boolean): InstanceSso | undefined {
  const issuer = bounded(env, 'VIGIL_OIDC_ISSUER', SSO_LIMITS.issuer);
  if (issuer === undefined) {
    const stray = OIDC_VARIABLES.find((name) => optional(env, name) !== undefined);
    if (stray) throw new ConfigError(stray, 'is set but VIGIL_OIDC_ISSUER is not');
    return undefined;
  }
  const problem = issuerProblem(issuer, allowHttpLoopback);
  if (problem) throw new ConfigError('VIGIL_OIDC_ISSUER', `is not usable: ${problem}, got "${issuer}"`);
  const clientId = required(env, 'VIGIL_OIDC_CLIENT_ID', SSO_LIMITS.clientId);
  const clientSecret = required(env, 'VIGIL_OIDC_CLIENT_SECRET', SSO_LIMITS.clientSecret);
  const accountIds = listOf(required(env, 'VIGIL_OIDC_ACCOUNT', 1000));
  for (const id of accountIds)
    if (!/^acc_[A-Za-z0-9]{1,60}$/.test(id)) throw new ConfigError('VIGIL_OIDC_ACCOUNT', `must be account ids separated by commas; "${id}" is not one`);
  const allowedDomains = listOf(bounded(env, 'VIGIL_OIDC_ALLOWED_DOMAINS', SSO_LIMITS.domains * (SSO_LIMITS.domain + 1))).map((d) => d.toLowerCase());
  if (allowedDomains.length > SSO_LIMITS.domains) throw new ConfigError('VIGIL_OIDC_ALLOWED_DOMAINS', `may name at most ${SSO_LIMITS.domains} domains`);
  for (const domain of allowedDomains) {
    const bad = domainProblem(domain);
    if (bad) throw new ConfigError('VIGIL_OIDC_ALLOWED_DOMAINS', `must be email domains separated by commas; ${bad}`);
  }
  const roleClaim = bounded(env, 'VIGIL_OIDC_ROLE_CLAIM', SSO_LIMITS.claim) ?? null;
  const map = roleMap(env);
  if (Object.keys(map).length > 0 && roleClaim === null)
    throw new ConfigError('VIGIL_OIDC_ROLE_MAP', 'needs VIGIL_OIDC_ROLE_CLAIM (the claim whose values it maps)');
  const defaultRaw = optional(env, 'VIGIL_OIDC_DEFAULT_ROLE') ?? 'none';
  if (defaultRaw !== 'none' && ssoRoleProblem(defaultRaw))
    throw new ConfigError('VIGIL_OIDC_DEFAULT_ROLE', `must be viewer, analyst, admin or none, got "${defaultRaw}"`);
  return {
    issuer,
    clientId,
    clientSecret,
    accountIds,
    allowedDomains,
    roleClaim,
    roleMap: map,
    defaultRole: defaultRaw === 'none' ? null : (defaultRaw as Role),
  };
}

/** Reads and validates `VIGIL_*` variables. Throws ConfigError naming the variable and what is allowed. */
export function loadConfig(env: Env = process.env): Config {
  let plans: PlanTable;
  try {
    plans = loadPlans(path(env, 'VIGIL_PLANS_FILE'));
  } catch (err) {
    if (err instanceof PlanFileError) throw new ConfigError('VIGIL_PLANS_FILE', err.message);
    throw err;
  }
  const initialPlan = optional(env, 'VIGIL_INITIAL_PLAN') ?? ENTRY_PLAN;
  if (!planNamed(plans, initialPlan)) throw new ConfigError('VIGIL_INITIAL_PLAN', `must name a plan (${Object.keys(plans).join(', ')}), got "${initialPlan}"`);
  const adminToken = optional(env, 'VIGIL_ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) throw new ConfigError('VIGIL_ADMIN_TOKEN', 'must be at least 16 characters long');
  const pseudonymSecret = optional(env, 'VIGIL_PSEUDONYM_SECRET');
  if (pseudonymSecret !== undefined && pseudonymSecret.length < MASTER_SECRET_MIN_LENGTH) {
    throw new ConfigError('VIGIL_PSEUDONYM_SECRET', `must be at least ${MASTER_SECRET_MIN_LENGTH} characters long`);
  }
  const metricsToken = optional(env, 'VIGIL_METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) throw new ConfigError('VIGIL_METRICS_TOKEN', 'must be at least 16 characters long');
  const ssoAllowHttpLoopback = oneOf(env, 'VIGIL_SSO_ALLOW_HTTP_LOOPBACK', ['on', 'off'] as const, 'off') === 'on';
  const metricsPort = optional(env, 'VIGIL_METRICS_PORT') === undefined ? undefined : integer(env, 'VIGIL_METRICS_PORT', 0, 1, 65535);
  const config: Config = {
    port: integer(env, 'VIGIL_PORT', 8080, 0, 65535),
    host: host(env),
    // ':memory:' (tests, throw-away runs) is SQLite's in-memory database, not a directory name.
    dataDir: dataDir(env),
    databaseUrl: url(env, 'VIGIL_DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'VIGIL_REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: redisPrefix(env),
    redisCluster: redisCluster(env),
    adminToken,
    metricsToken,
    metricsPort,
    metricsHost: host(env, 'VIGIL_METRICS_HOST', '127.0.0.1'),
    trustProxy: cidrList(env, 'VIGIL_TRUST_PROXY'),
    plans,
    initialPlan,
    ipLimitPerMinute: integer(env, 'VIGIL_IP_LIMIT', 600, 1, 1_000_000_000),
    ipLimits: ipLimits(env),
    maxConnectionsPerIp: integer(env, 'VIGIL_MAX_CONNECTIONS_PER_IP', 256, 1, 1_000_000),
    maxRequestsPerSocket: integer(env, 'VIGIL_MAX_REQUESTS_PER_SOCKET', 1000, 0, 100_000_000),
    ...feedsDir(env),
    geoipCity: existing(env, 'VIGIL_GEOIP_CITY', 'file'),
    geoipAsn: existing(env, 'VIGIL_GEOIP_ASN', 'file or directory'),
    breachedHashFile: existing(env, 'VIGIL_BREACHED_HASHES_FILE', 'file'),
    maxEventBytes: integer(env, 'VIGIL_MAX_EVENT_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
    maxBatchBytes: integer(env, 'VIGIL_MAX_BATCH_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    commitWindowMs: integer(env, 'VIGIL_COMMIT_WINDOW_MS', 0, 0, 1000),
    threatModelChangesPerMinute: integer(env, 'VIGIL_THREAT_MODEL_CHANGES_PER_MINUTE', 30, 1, 1_000_000),
    commitMaxEvents: integer(env, 'VIGIL_COMMIT_MAX_EVENTS', 1000, 1, 100_000),
    subjectJobLeaseMs: integer(env, 'VIGIL_SUBJECT_JOB_LEASE_MS', 30 * SECOND_MS, SECOND_MS, HOUR_MS),
    erasureRewrite: oneOf(env, 'VIGIL_ERASURE_REWRITE', ['on', 'off'] as const, 'off') === 'on',
    ingestInFlightBytes: integer(env, 'VIGIL_INGEST_IN_FLIGHT_BYTES', 128 * 1024, 1024, 1024 * 1024 * 1024),
    ingestMaxWaiting: integer(env, 'VIGIL_INGEST_MAX_WAITING', 4096, 0, 1_000_000),
    ingestMaxInFlight: integer(env, 'VIGIL_INGEST_MAX_IN_FLIGHT', 128, 1, 1_000_000),
    ingestMaxWaitMs: integer(env, 'VIGIL_INGEST_MAX_WAIT_MS', 1000, 0, 60_000),
    sqliteSynchronous: oneOf(env, 'VIGIL_SQLITE_SYNCHRONOUS', ['full', 'normal'] as const, 'full'),
    logLevel: oneOf(env, 'VIGIL_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    retentionEnabled: oneOf(env, 'VIGIL_RETENTION', ['on', 'off'] as const, 'on') === 'on',
    pseudonymSecret,
    team: {
      keySignIn: oneOf(env, 'VIGIL_DASHBOARD_KEY_SIGN_IN', ['on', 'off'] as const, 'off') === 'on',
      publicUrl: publicUrl(env),
      smtp: smtp(env),
      oidc: instanceSso(env, ssoAllowHttpLoopback),
      ssoAllowHttpLoopback,
      ssoAllowCidrs: cidrList(env, 'VIGIL_SSO_ALLOW_CIDRS').map((text) => parseCidr(text) as Cidr),
    },
    webhooks: {
      allowCidrs: cidrList(env, 'VIGIL_WEBHOOK_ALLOW_CIDRS').map((text) => parseCidr(text) as Cidr),
      timeoutMs: integer(env, 'VIGIL_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      pollMs: integer(env, 'VIGIL_WEBHOOK_POLL_MS', 1000, 10, 60_000),
      maxEndpointsPerAccount: integer(env, 'VIGIL_WEBHOOK_MAX_ENDPOINTS', 10, 1, 1000),
      deliveriesPerMinute: integer(env, 'VIGIL_WEBHOOK_RATE_PER_MINUTE', 600, 1, 1_000_000),
    },
  };
  return Object.freeze(config);
}
