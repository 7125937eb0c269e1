// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromiumPresent as chromiumPresentFor, launchChromium } from '../helpers/chromium.js';
import { REDIS_URL } from '../limits/redis-helper.js';
import { ADMIN, api, provision, startService, tempDir, type Service } from '../process/service.js';
import { adminPool, dropSchema, freshSchema, schemaUrl } from '../storage/pg-helpers.js';

const ROOT = new URL('../../', import.meta.url).pathname;
export const DASHBOARD_DIST = join(ROOT, 'dashboard', 'dist');

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** axe-core on the current view: no violation of serious or critical impact. */
export async function expectAccessible(page: Page, view: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const run = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe.run;
    return (await run(document, { resultTypes: ['violations'] })).violations;
  });
  // Imported here: the screenshot script loads this module outside vitest, where `expect` cannot load.
  const { expect } = await import('vitest');
  const serious = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${view}: ${v.id} ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
  expect(serious).toEqual([]);
}

export const chromiumPresent = (): boolean => chromiumPresentFor('dashboard suite');

/** The service answers from the built bundle; build it once when a checkout has not. */
export function ensureDashboardBuilt(): void {
  if (!existsSync(join(DASHBOARD_DIST, 'index.html'))) execFileSync('npm', ['run', 'build:dashboard'], { cwd: ROOT, stdio: 'inherit' });
}

/** Where a flow's owners and viewers sign in: one service, or two instances of a scaled-out one. */
export interface Topology {
  readonly owners: Service;
  readonly viewers: Service;
  close(): Promise<void>;
}

/** One embedded service (SQLite, in-process state) for owners and viewers alike. */
export async function oneService(name: string, env: Record<string, string> = {}): Promise<Topology> {
  const service = await startService(tempDir(`vigil-${name}-`), env);
  return {
    owners: service,
    viewers: service,
    close: async () => {
      service.child.kill('SIGTERM');
      await service.exited;
    },
  };
}

/**
 * Two processes sharing a fresh PostgreSQL schema and a Redis prefix: owners on one, viewers on
 * the other, so what one does must be in force on the other.
 */
export async function twoServicesSharing(name: string, redisPrefix: string, env: Record<string, string> = {}): Promise<Topology> {
  const schema = freshSchema();
  const shared = { VIGIL_DATABASE_URL: schemaUrl(schema), VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: redisPrefix, ...env };
  // One after the other: the second migrates a schema the first already created.
  const a = await startService(tempDir(`vigil-${name}-a-`), shared);
  const b = await startService(tempDir(`vigil-${name}-b-`), shared);
  return {
    owners: a,
    viewers: b,
    close: async () => {
      for (const s of [a, b]) s.child.kill('SIGTERM');
      await Promise.all([a.exited, b.exited]);
      const admin = adminPool();
      await dropSchema(admin, schema).finally(() => admin.end());
    },
  };
}

export interface Stage {
  readonly service: Service;
  readonly browser: Browser;
  readonly key: string;
  readonly accountId: string;
  close(): Promise<void>;
}

/**
 * The real service (trusting the loopback proxy, so X-Forwarded-Proto: https counts as TLS), one
 * Pro account and a browser; `env` adds to the service's settings.
 */
export async function openStage(env: Record<string, string> = {}): Promise<Stage> {
  ensureDashboardBuilt();
  const service = await startService(tempDir('vigil-dashboard-'), { VIGIL_TRUST_PROXY: '127.0.0.1/32', VIGIL_DASHBOARD_KEY_SIGN_IN: 'on', ...env });
  const { key, accountId } = await provision(service.base, 'pro');
  const browser = await launchChromium();
  return {
    service,
    browser,
    key,
    accountId,
    async close() {
      await browser.close();
      service.child.kill('SIGTERM');
      await service.exited;
    },
  };
}

export const ATTACKER_IP = '185.220.101.4';
export const VICTIM = 'alice@example.com';

/**
 * An attack sent through the ingestion API: a brute force on one account from a Tor exit
 * with a scanner user agent and SQL injection, then a successful login and an MFA change
 * (an account-takeover kill chain), plus ordinary traffic.
 */
export async function sendAttack(base: string, key: string): Promise<void> {
  const send = async (body: Record<string, unknown>) => {
    const res = await api(base, 'POST', '/v1/events', key, body);
    if (res.status !== 202) throw new Error(`event refused: ${res.status} ${JSON.stringify(res.json)}`);
  };
  for (let i = 0; i < 4; i++) await send({ event: 'auth.login.success', actor_id: `user${i}@example.com`, ip: `81.2.69.${140 + i}` });
  // Generic requests the service tags with an inferred type (inferred:auth.logout).
  for (let i = 0; i < 2; i++)
    await send({
      event: 'api.request',
      actor_id: `user${i}@example.com`,
      ip: `81.2.69.${140 + i}`,
      request: { method: 'POST', path: '/account/logout', status: 200 },
    });
  for (let i = 0; i < 12; i++)
    await send({
      event: 'auth.login.failure',
      actor_id: VICTIM,
      ip: ATTACKER_IP,
      user_agent: 'sqlmap/1.7.2#stable (https://sqlmap.org)',
      metadata: { path: "/login?user=admin' OR '1'='1" },
    });
  await send({ event: 'auth.login.success', actor_id: VICTIM, ip: ATTACKER_IP });
  await send({ event: 'auth.mfa.disabled', actor_id: VICTIM, ip: ATTACKER_IP });
}

export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Secret API key').fill(key);
  await page.getByRole('button', { name: 'Sign in with the key' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** A person of the account with a password: invited by the operator, the invitation accepted over HTTP. */
export async function addPerson(base: string, accountId: string, person: { email: string; password: string }, role: string): Promise<void> {
  const invited = await api(base, 'POST', `/admin/accounts/${accountId}/invitations`, ADMIN, { email: person.email, role });
  if (invited.status !== 201) throw new Error(`invitation refused: ${invited.status} ${JSON.stringify(invited.json)}`);
  const token = /#\/accept\/([^?&#]+)/.exec(String(invited.json.link))?.[1] ?? '';
  const accepted = await fetch(`${base}/dashboard/api/invitations/${token}/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: person.password }),
  });
  if (accepted.status !== 201) throw new Error(`invitation not accepted: ${accepted.status} ${await accepted.text()}`);
}

/** Signs a person in with their email and password. */
export async function signInAs(page: Page, base: string, person: { email: string; password: string }): Promise<void> {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** The threat-intelligence feeds of the tests (a Tor exit list, a blocklist, hosting networks). */
export const FIXTURE_FEEDS = join(ROOT, 'test', 'fixtures', 'feeds');

/** The day's cast: a stuffing source, the address that takes over an account (on the fixture blocklist), a scanner and a host. */
export const DAY = {
  stuffingIps: ['45.155.205.17', '45.155.205.18'],
  stuffedActors: 24,
  takeoverIp: '5.188.10.77',
  takeoverActor: 'dana@example.com',
  homeIp: '81.2.69.160',
  scannerIp: '45.155.205.200',
  host: 'bastion-1',
  sshIp: '194.26.29.113',
} as const;

/** sha1("password"): on the shipped breached-password list. */
const BREACHED = '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8';

/**
 * A small realistic day, sent through the batch endpoint with event times over the last 20 hours:
 * ordinary sign-ins; a credential-stuffing campaign (breached passwords on many accounts from two
 * addresses of one network); an account takeover from a blocklisted address that ends in a large
 * export; a scanner; SSH failures then a success on a host.
 */
export async function sendDay(base: string, key: string, now = Date.now()): Promise<number> {
  const at = (hoursAgo: number, i = 0) => new Date(now - hoursAgo * 3_600_000 + i * 1000).toISOString();
  const events: Record<string, unknown>[] = [];
  for (let i = 0; i < 12; i++)
    events.push({
      event: 'auth.login.success',
      timestamp: at(20 - i, i),
      actor_id: `user${i}@example.com`,
      ip: `81.2.69.${140 + i}`,
      session_id: `sess-u${i}`,
    });
  events.push({ event: 'auth.login.success', timestamp: at(19), actor_id: DAY.takeoverActor, ip: DAY.homeIp, session_id: 'sess-dana-home' });
  for (let i = 0; i < DAY.stuffedActors; i++)
    events.push({
      event: 'auth.login.failure',
      timestamp: at(9, i * 20),
      actor_id: `member${i}@example.com`,
      ip: DAY.stuffingIps[i % DAY.stuffingIps.length],
      user_agent: 'python-requests/2.31.0',
      password_sha1: BREACHED,
    });
  for (let i = 0; i < 6; i++)
    events.push({
      event: 'auth.login.failure',
      timestamp: at(5, i * 30),
      actor_id: DAY.takeoverActor,
      ip: DAY.takeoverIp,
      user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36',
    });
  events.push({ event: 'auth.login.success', timestamp: at(5, 200), actor_id: DAY.takeoverActor, ip: DAY.takeoverIp, session_id: 'sess-dana-x' });
  events.push({ event: 'auth.mfa.disabled', timestamp: at(5, 260), actor_id: DAY.takeoverActor, ip: DAY.takeoverIp, session_id: 'sess-dana-x' });
  events.push({
    event: 'data.exported',
    timestamp: at(5, 400),
    actor_id: DAY.takeoverActor,
    ip: DAY.takeoverIp,
    session_id: 'sess-dana-x',
    metadata: { rows: 250_000, resource: 'customers' },
  });
  for (const [i, path] of ['/wp-admin/', '/.env', "/search?q=' OR 1=1--", '/../../etc/passwd', '/phpmyadmin/'].entries())
    events.push({
      event: 'api.request',
      timestamp: at(3, i * 5),
      ip: DAY.scannerIp,
      user_agent: 'sqlmap/1.7.2#stable (https://sqlmap.org)',
      request: { method: 'GET', path, status: 404 },
    });
  for (let i = 0; i < 12; i++)
    events.push({ event: 'server.ssh.login.failure', timestamp: at(2, i * 10), host: DAY.host, ip: DAY.sshIp, actor_id: 'root', metadata: { port: 22 } });
  events.push({ event: 'server.ssh.login.success', timestamp: at(2, 150), host: DAY.host, ip: DAY.sshIp, actor_id: 'root' });
  for (let from = 0; from < events.length; from += 100) {
    const res = await api(base, 'POST', '/v1/events/batch', key, { events: events.slice(from, from + 100) });
    if (res.status !== 202) throw new Error(`batch refused: ${res.status} ${JSON.stringify(res.json)}`);
  }
  return events.length;
}
