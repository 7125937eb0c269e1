// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { chromiumPresent as chromiumPresentFor, launchChromium } from '../helpers/chromium.js';
import { api, provision, startService, tempDir, type Service } from '../process/service.js';

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

export interface Stage {
  readonly service: Service;
  readonly browser: Browser;
  readonly key: string;
  readonly accountId: string;
  close(): Promise<void>;
}

/** The real service (trusting the loopback proxy, so X-Forwarded-Proto: https counts as TLS), one Pro account and a browser. */
export async function openStage(): Promise<Stage> {
  ensureDashboardBuilt();
  const service = await startService(tempDir('vigil-dashboard-'), { VIGIL_TRUST_PROXY: '127.0.0.1/32', VIGIL_DASHBOARD_KEY_SIGN_IN: 'on' });
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
