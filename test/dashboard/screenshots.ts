// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
/**
 * Refreshes docs/images/dashboard-*.png: starts the real service, sends an attack through the
 * API, signs in with headless Chromium and captures each view (laptop size, and the overview
 * on a phone). Run with `npm run screenshots`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { api } from '../process/service.js';
import { openStage, sendAttack, signIn } from './harness.js';

const OUT = new URL('../../docs/images/', import.meta.url).pathname;

async function shoot(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.evaluate(() => document.fonts.ready);
  const path = join(OUT, `dashboard-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(path);
}

const stage = await openStage();
try {
  mkdirSync(OUT, { recursive: true });
  const base = stage.service.base;
  await sendAttack(base, stage.key);
  const alerts = await api(base, 'GET', '/v1/alerts?limit=100', stage.key);
  const chain = alerts.json.data.find((a: { type: string }) => a.type === 'chain.account_takeover');
  const bruteForce = alerts.json.data.find((a: { type: string }) => a.type === 'auth.brute_force.account');
  const events = await api(base, 'GET', `/v1/events?type=auth.login.failure&limit=1`, stage.key);

  const context = await stage.browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${base}/dashboard`);
  await shoot(page, 'sign-in');
  await signIn(page, base, stage.key);
  const views: [string, string][] = [
    ['overview', '#/'],
    ['events', '#/events'],
    ['event', `#/events/${events.json.data[0].id}`],
    ['alerts', '#/alerts'],
    ['alert', `#/alerts/${bruteForce.id}`],
    ['kill-chain', `#/alerts/${chain.id}`],
    ['usage', '#/usage'],
    ['settings', '#/settings'],
    ['threat-models', '#/threat-models'],
  ];
  for (const [name, hash] of views) {
    await page.goto(`${base}/dashboard${hash}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await shoot(page, name);
  }
  const phone = await stage.browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true });
  await phone.addCookies(await context.cookies());
  const small = await phone.newPage();
  await small.goto(`${base}/dashboard#/`);
  await small.getByRole('heading', { level: 1 }).waitFor();
  await shoot(small, 'overview-phone');
} finally {
  await stage.close();
}
