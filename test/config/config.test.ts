import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';

const dir = mkdtempSync(join(tmpdir(), 'vigil-config-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const aFile = file('some.file', 'x');

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** [variable, bad value, text the message must contain] — every VIGIL_* variable the service reads. */
const BAD: [string, string, string][] = [
  ['VIGIL_PORT', 'eighty', '0 to 65535'],
  ['VIGIL_PORT', '65536', '0 to 65535'],
  ['VIGIL_PORT', '-1', '0 to 65535'],
  ['VIGIL_PORT', '80.5', '0 to 65535'],
  ['VIGIL_HOST', 'not a host!', 'IP address'],
  ['VIGIL_HOST', 'http://localhost', 'IP address'],
  ['VIGIL_DATA_DIR', aFile, 'directory'],
  ['VIGIL_DATABASE_URL', 'mysql://db/vigil', 'postgres:'],
  ['VIGIL_DATABASE_URL', 'not a url', 'postgres:'],
  ['VIGIL_REDIS_URL', 'http://cache:6379', 'redis:'],
  ['VIGIL_ADMIN_TOKEN', 'short', 'at least 16'],
  ['VIGIL_METRICS_TOKEN', 'short', 'at least 16'],
  ['VIGIL_PSEUDONYM_SECRET', 'x'.repeat(31), 'at least 32'],
  ['VIGIL_METRICS_PORT', '0', '1 to 65535'],
  ['VIGIL_METRICS_PORT', 'nine', '1 to 65535'],
  ['VIGIL_METRICS_HOST', 'not a host!', 'IP address'],
  ['VIGIL_TRUST_PROXY', '10.0.0.0/8,proxy.local', 'proxy.local'],
  ['VIGIL_TRUST_PROXY', '10.0.0.0/33', '10.0.0.0/33'],
  ['VIGIL_PLANS_FILE', join(dir, 'missing.json'), 'cannot be read'],
  ['VIGIL_PLANS_FILE', file('bad.json', '{"plans": '), 'not valid JSON'],
  ['VIGIL_PLANS_FILE', file('neg.json', '{"plans": {"pro": {"rpm": -5}}}'), 'plans.pro.rpm'],
  ['VIGIL_PLANS_FILE', file('new.json', '{"plans": {"team": {"rpm": 5}}}'), 'team'],
  ['VIGIL_INITIAL_PLAN', 'platinum', 'platinum'],
  ['VIGIL_IP_LIMIT', '0', '1 to'],
  ['VIGIL_IP_LIMIT', 'lots', '1 to'],
  ['VIGIL_MAX_CONNECTIONS_PER_IP', '0', '1 to'],
  ['VIGIL_MAX_REQUESTS_PER_SOCKET', '-1', '0 to'],
  ['VIGIL_IP_LIMITS', '127.0.0.1/32', '127.0.0.1/32=1000000'],
  ['VIGIL_IP_LIMITS', '127.0.0.1/32=many', '127.0.0.1/32=1000000'],
  ['VIGIL_IP_LIMITS', 'nowhere=5', 'nowhere'],
  ['VIGIL_FEEDS_DIR', join(dir, 'no-feeds'), 'existing directory'],
  ['VIGIL_FEEDS_DIR', aFile, 'directory'],
  ['VIGIL_GEOIP_CITY', join(dir, 'no-city.mmdb'), 'existing file'],
  ['VIGIL_GEOIP_ASN', join(dir, 'no-such-asn-data'), 'cannot be read'],
  ['VIGIL_BREACHED_HASHES_FILE', join(dir, 'no-hashes.txt'), 'existing file'],
  ['VIGIL_MAX_EVENT_BYTES', '10', '1024'],
  ['VIGIL_MAX_BATCH_BYTES', '1e6', '1024'],
  ['VIGIL_COMMIT_WINDOW_MS', '5000', '0 to 1000'],
  ['VIGIL_REDIS_PREFIX', 'has space', 'letters, digits'],
  ['VIGIL_REDIS_CLUSTER', 'yes', 'on, off'],
  ['VIGIL_REDIS_CLUSTER', 'on', 'VIGIL_REDIS_URL must name'],
  ['VIGIL_COMMIT_MAX_EVENTS', '0', '1 to'],
  ['VIGIL_SUBJECT_JOB_LEASE_MS', '999', '1000 to 3600000'],
  ['VIGIL_ERASURE_REWRITE', 'yes', 'on, off'],
  ['VIGIL_INGEST_IN_FLIGHT_BYTES', '512', '1024 to'],
  ['VIGIL_INGEST_MAX_WAITING', '-1', '0 to'],
  ['VIGIL_INGEST_MAX_IN_FLIGHT', '0', '1 to'],
  ['VIGIL_INGEST_MAX_WAIT_MS', '60001', '0 to 60000'],
  ['VIGIL_SQLITE_SYNCHRONOUS', 'off', 'full, normal'],
  ['VIGIL_LOG_LEVEL', 'verbose', 'info'],
  ['VIGIL_RETENTION', 'yes', 'on, off'],
  ['VIGIL_DASHBOARD_KEY_SIGN_IN', 'yes', 'on, off'],
  ['VIGIL_PUBLIC_URL', 'vigil.example.com', 'http: or https:'],
  ['VIGIL_PUBLIC_URL', 'https://vigil.example.com/?x=1', 'without credentials, query or fragment'],
  ['VIGIL_SMTP_URL', 'http://mail.example.com', 'smtp: or smtps:'],
  ['VIGIL_SMTP_FROM', 'vigil@example.com', 'VIGIL_SMTP_URL is not'],
  ['VIGIL_WEBHOOK_ALLOW_CIDRS', '127.0.0.1/32,localhost', 'localhost'],
  ['VIGIL_SSO_ALLOW_CIDRS', '10.20.0.0/16,intranet', 'intranet'],
  ['VIGIL_WEBHOOK_TIMEOUT_MS', '50', '100 to 60000'],
  ['VIGIL_WEBHOOK_POLL_MS', 'often', '10 to 60000'],
  ['VIGIL_WEBHOOK_MAX_ENDPOINTS', '0', '1 to 1000'],
  ['VIGIL_THREAT_MODEL_CHANGES_PER_MINUTE', '0', '1 to 1000000'],
  ['VIGIL_WEBHOOK_RATE_PER_MINUTE', '1.5', '1 to 1000000'],
  ['VIGIL_SSO_ALLOW_HTTP_LOOPBACK', 'yes', 'on, off'],
  ['VIGIL_OIDC_ISSUER', 'http://login.example.com', 'https URL'],
  ['VIGIL_OIDC_ISSUER', 'http://127.0.0.1:9000', 'VIGIL_SSO_ALLOW_HTTP_LOOPBACK=on'],
  ['VIGIL_OIDC_CLIENT_ID', 'vigil', 'VIGIL_OIDC_ISSUER is not'],
  ['VIGIL_OIDC_CLIENT_SECRET', 'hunter2', 'VIGIL_OIDC_ISSUER is not'],
  ['VIGIL_OIDC_ACCOUNT', 'acc_1', 'VIGIL_OIDC_ISSUER is not'],
  ['VIGIL_OIDC_ALLOWED_DOMAINS', 'example.com', 'VIGIL_OIDC_ISSUER is not'],
  ['VIGIL_OIDC_ROLE_CLAIM', 'groups', 'VIGIL_OIDC_ISSUER is not'],
  ['VIGIL_OIDC_ROLE_MAP', 'admins=admin', 'VIGIL_OIDC_ISSUER is not'],
  ['VIGIL_OIDC_DEFAULT_ROLE', 'viewer', 'VIGIL_OIDC_ISSUER is not'],
];

/** A complete instance single sign-on, each bad value below replacing one of its variables. */
const OIDC: Record<string, string> = {
  VIGIL_OIDC_ISSUER: 'https://login.example.com/realms/corp',
  VIGIL_OIDC_CLIENT_ID: 'vigil',
  VIGIL_OIDC_CLIENT_SECRET: 'client-secret-value',
  VIGIL_OIDC_ACCOUNT: 'acc_01J8Z3V5N6X7Y8Z9A0B1C2D3E4',
};
const BAD_OIDC: [string, string, string][] = [
  ['VIGIL_OIDC_ISSUER', 'https://login.example.com/?tenant=1', 'without a query'],
  ['VIGIL_OIDC_ISSUER', 'https://' + 'a'.repeat(600) + '.example.com', 'at most 512'],
  ['VIGIL_OIDC_CLIENT_ID', '', 'must be set when VIGIL_OIDC_ISSUER is'],
  ['VIGIL_OIDC_CLIENT_SECRET', '', 'must be set when VIGIL_OIDC_ISSUER is'],
  ['VIGIL_OIDC_ACCOUNT', '', 'must be set when VIGIL_OIDC_ISSUER is'],
  ['VIGIL_OIDC_ACCOUNT', 'acc_1,corp', '"corp" is not one'],
  ['VIGIL_OIDC_ALLOWED_DOMAINS', 'example.com,@corp', '"@corp" is not an email domain'],
  ['VIGIL_OIDC_ROLE_MAP', 'admins', 'must look like'],
  ['VIGIL_OIDC_ROLE_MAP', 'admins=owner', 'not a role single sign-on grants'],
  ['VIGIL_OIDC_DEFAULT_ROLE', 'root', 'viewer, analyst, admin or none'],
  ['VIGIL_OIDC_ROLE_CLAIM', 'g'.repeat(101), 'at most 100'],
];

describe('loadConfig', () => {
  it('defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe('0.0.0.0');
    expect(c.dataDir).toBe(join(process.cwd(), 'data'));
    expect(c.adminToken).toBeUndefined();
    expect(c.plans).toBe(DEFAULT_PLANS);
    expect(c.initialPlan).toBe('free');
    expect(c.ipLimitPerMinute).toBe(600);
    expect(c.maxEventBytes).toBe(64 * 1024);
    expect(c.maxBatchBytes).toBe(1024 * 1024);
    expect(c.sqliteSynchronous).toBe('full');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("the feeds folder is the data directory's unless VIGIL_FEEDS_DIR names one; an in-memory database has none", () => {
    expect(loadConfig({})).toMatchObject({ feedsDir: join(process.cwd(), 'data', 'feeds'), feedsDirIsDefault: true });
    expect(loadConfig({ VIGIL_DATA_DIR: '/srv/vigil' })).toMatchObject({ feedsDir: '/srv/vigil/feeds', feedsDirIsDefault: true });
    const memory = loadConfig({ VIGIL_DATA_DIR: ':memory:' });
    expect([memory.feedsDir, memory.feedsDirIsDefault]).toEqual([undefined, false]);
    const chosen = loadConfig({ VIGIL_FEEDS_DIR: tmpdir() });
    expect(chosen).toMatchObject({ feedsDir: tmpdir(), feedsDirIsDefault: false });
  });

  it('reads good values', () => {
    const c = loadConfig({
      VIGIL_PORT: '0',
      VIGIL_HOST: '::',
      VIGIL_DATA_DIR: ':memory:',
      VIGIL_DATABASE_URL: 'postgres://u:p@db:5432/vigil',
      VIGIL_REDIS_URL: 'rediss://cache:6380',
      VIGIL_REDIS_CLUSTER: 'on',
      VIGIL_ADMIN_TOKEN: 'a'.repeat(16),
      VIGIL_TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
      VIGIL_PLANS_FILE: file('good.json', '{"plans": {"pro": {"rpm": 5000}}}'),
      VIGIL_INITIAL_PLAN: 'starter',
      VIGIL_IP_LIMITS: '127.0.0.1/32=1000000, 10.0.0.0/8=6000',
      VIGIL_FEEDS_DIR: dir,
      VIGIL_GEOIP_CITY: aFile,
      VIGIL_SQLITE_SYNCHRONOUS: 'normal',
      VIGIL_PSEUDONYM_SECRET: 's'.repeat(32),
    });
    expect(c).toMatchObject({
      pseudonymSecret: 's'.repeat(32),
      port: 0,
      host: '::',
      dataDir: ':memory:',
      initialPlan: 'starter',
      redisCluster: true,
      trustProxy: ['10.0.0.0/8', '192.168.1.1'],
      feedsDir: dir,
      geoipCity: aFile,
    });
    expect(c.plans.pro?.rpm).toBe(5000);
    expect(c.plans.pro?.batchMax).toBe(100);
    expect(c.ipLimits.map((o) => [o.cidr, o.perMinute])).toEqual([
      ['127.0.0.1/32', 1_000_000],
      ['10.0.0.0/8', 6000],
    ]);
  });

  it('reads the public address and the mail settings, refusing mail without a sender', () => {
    const c = loadConfig({ VIGIL_PUBLIC_URL: 'https://vigil.example.com/', VIGIL_SMTP_URL: 'smtps://u:p@mail:465', VIGIL_SMTP_FROM: 'Vigil <v@example.com>' });
    expect(c.team).toMatchObject({ publicUrl: 'https://vigil.example.com', smtp: { url: 'smtps://u:p@mail:465', from: 'Vigil <v@example.com>' } });
    const noFrom = errorOf({ VIGIL_SMTP_URL: 'smtp://u:secretpw@mail:25' });
    expect([noFrom.variable, noFrom.message.includes('secretpw')]).toEqual(['VIGIL_SMTP_FROM', false]);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ VIGIL_PORT: '', VIGIL_ADMIN_TOKEN: '  ', VIGIL_DATABASE_URL: '' })).toMatchObject({
      port: 8080,
      adminToken: undefined,
      databaseUrl: undefined,
    });
  });

  it.each(BAD)('%s=%j is a ConfigError naming the variable', (variable, value, says) => {
    const err = errorOf({ [variable]: value });
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(variable + ' ')).toBe(true);
    expect(err.message).toContain(says);
    expect(err.message).not.toContain('\n');
  });

  it.each(BAD_OIDC)('%s=%j beside a complete single sign-on is a ConfigError naming the variable', (variable, value, says) => {
    const err = errorOf({ ...OIDC, VIGIL_OIDC_ROLE_CLAIM: 'groups', [variable]: value });
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(says);
  });

  it('reads the instance single sign-on and the public address', () => {
    const c = loadConfig({
      ...OIDC,
      VIGIL_OIDC_ISSUER: 'http://127.0.0.1:9000',
      VIGIL_SSO_ALLOW_HTTP_LOOPBACK: 'on',
      VIGIL_OIDC_ALLOWED_DOMAINS: 'Example.com, corp.example.com',
      VIGIL_OIDC_ROLE_CLAIM: 'groups',
      VIGIL_OIDC_ROLE_MAP: 'secops-admins=admin, secops=analyst',
      VIGIL_OIDC_DEFAULT_ROLE: 'viewer',
      VIGIL_PUBLIC_URL: 'https://vigil.example.com/',
    });
    expect(c.team.publicUrl).toBe('https://vigil.example.com');
    expect(c.team.oidc).toEqual({
      issuer: 'http://127.0.0.1:9000',
      clientId: 'vigil',
      clientSecret: 'client-secret-value',
      accountIds: ['acc_01J8Z3V5N6X7Y8Z9A0B1C2D3E4'],
      allowedDomains: ['example.com', 'corp.example.com'],
      roleClaim: 'groups',
      roleMap: { 'secops-admins': 'admin', secops: 'analyst' },
      defaultRole: 'viewer',
    });
    expect(loadConfig({}).team.oidc).toBeUndefined();
  });

  it('covers every VIGIL_* variable the source reads', async () => {
    const { execSync } = await import('node:child_process');
    const used = new Set(execSync("grep -rhoE 'VIGIL_[A-Z_]+' src", { encoding: 'utf8' }).trim().split('\n'));
    const tested = new Set(BAD.map(([v]) => v));
    expect([...used].filter((v) => !tested.has(v)).sort()).toEqual([]);
  });
});
