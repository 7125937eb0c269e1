// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
/**
 * Refreshes docs/images/dashboard-*.png: starts the real service, sends an attack through the
 * API, signs in with headless Chromium and captures each view (laptop size, and some on a phone
 * and in the dark colour scheme). Run with `npm run screenshots`.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { api } from '../process/service.js';
import { addPerson, DAY, FIXTURE_FEEDS, openStage, sendAttack, sendDay, signIn, signInAs } from './harness.js';

const OUT = new URL('../../docs/images/', import.meta.url).pathname;

async function shoot(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.evaluate(() => document.fonts.ready);
  const path = join(OUT, `dashboard-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(path);
}

// A webhook receiver on loopback (allowed for this run), so the webhook view shows a delivered test.
const receiver = createServer((_req, res) => res.writeHead(200).end('ok'));
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const stage = await openStage({ VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_FEEDS_DIR: FIXTURE_FEEDS });
try {
  mkdirSync(OUT, { recursive: true });
  const base = stage.service.base;
  await sendAttack(base, stage.key);
  await sendDay(base, stage.key);
  const alerts = await api(base, 'GET', '/v1/alerts?limit=100', stage.key);
  const chain = alerts.json.data.find((a: { type: string }) => a.type === 'chain.account_takeover');
  const bruteForce = alerts.json.data.find((a: { type: string }) => a.type === 'auth.brute_force.account');
  const request = await api(base, 'POST', '/v1/events/batch', stage.key, {
    events: [
      {
        event: 'api.request',
        actor_id: 'mallory',
        ip: '203.0.113.9',
        host: 'web-1.example.com',
        session_id: 'sess-42',
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
        request: { method: 'GET', path: '/search', query: "id=1' UNION SELECT password FROM users--", status: 500 },
        metadata: { device_id: 'dev-7', plan: 'team' },
      },
    ],
  });
  const requestEvent = request.json.results[0].id as string;
  const hook = await api(base, 'POST', '/v1/webhooks', stage.key, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/vigil`,
    description: 'On-call channel',
    filters: { min_severity: 'high', alert_types: ['auth.*', 'chain.*'] },
  });
  await api(base, 'POST', `/v1/webhooks/${hook.json.id}/test`, stage.key);
  await api(base, 'POST', '/v1/keys', stage.key, { name: 'web shop (browser)', kind: 'publishable', scopes: ['ingest'] });
  await api(base, 'POST', '/v1/keys', stage.key, { name: 'SIEM export', scopes: ['read'] });
  const scanner = {
    name: 'Scanner logins',
    description: 'Five failed sign-ins with a scanner user agent from one address within an hour',
    match: { event: 'auth.login.failure', where: { field: 'user_agent', op: 'contains', value: 'sqlmap' } },
    threshold: { count: 5, group_by: 'ip', window_seconds: 3600 },
    outcome: { alert: 'custom.scanner_logins', severity: 'high', tags: ['scanner'] },
  };
  const model = await api(base, 'POST', '/v1/threat-models', stage.key, scanner);
  await api(base, 'PATCH', `/v1/threat-models/${model.json.id}`, stage.key, { outcome: { ...scanner.outcome, points: 40 } });
  await api(base, 'POST', '/v1/threat-models', stage.key, {
    format: 'sigma',
    enabled: false,
    rule: 'title: Admin sign-in from a Tor exit range\ndetection:\n  s:\n    event.action: auth.login.success\n    User|startswith: admin\n  tor:\n    SourceIp|cidr: 185.220.101.0/24\n  condition: s and tor\nlevel: high\n',
  });

  const context = await stage.browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${base}/dashboard`);
  await shoot(page, 'sign-in');
  await signIn(page, base, stage.key);
  const views: [string, string][] = [
    ['overview', '#/'],
    ['events', '#/events'],
    ['event', `#/events/${requestEvent}`],
    ['alerts', '#/alerts'],
    ['alert', `#/alerts/${bruteForce.id}`],
    ['kill-chain', `#/alerts/${chain.id}`],
    ['usage', '#/usage'],
    ['settings', '#/settings'],
    ['threat-models', '#/threat-models'],
    ['keys', '#/keys'],
    ['webhooks', '#/webhooks'],
    ['webhook', `#/webhooks/${hook.json.id}`],
    ['search', `#/events?q=${encodeURIComponent('type:auth.login.failure AND risk:>=40')}&since=24h`],
    ['campaigns', '#/alerts?group=campaign'],
    ['actor', `#/actor/${encodeURIComponent(DAY.takeoverActor)}`],
    ['ip', `#/ip/${DAY.takeoverIp}`],
    ['host', `#/host/${DAY.host}`],
  ];
  for (const [name, hash] of views) {
    await page.goto(`${base}/dashboard${hash}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    // A view shows its heading before its data: wait until nothing is loading.
    await page.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
    await shoot(page, name);
  }
  // The editor with a dry run's result and its versions.
  await page.goto(`${base}/dashboard#/threat-models/${model.json.id}`);
  await page.getByRole('button', { name: 'Run dry run' }).click();
  await page.getByTestId('dry-run-summary').waitFor();
  await shoot(page, 'threat-model');
  // A refused rule: the service's messages at the paths they concern.
  await page.goto(`${base}/dashboard#/threat-models/new`);
  await page.getByLabel('Rule (JSON)', { exact: true }).fill(
    JSON.stringify(
      {
        ...scanner,
        match: { event: 'auth.login.failure', where: { field: 'user_agent', op: 'regex', value: 'sqlmap(?=/)' } },
        threshold: { count: 0, group_by: 'ip', window_seconds: 3600 },
      },
      null,
      2,
    ),
  );
  await page.getByRole('button', { name: 'Create model' }).click();
  await page.getByTestId('problems').waitFor();
  await shoot(page, 'threat-model-problems');
  // The privacy view as an owner sees it (a key's session does not handle data subjects): a subject found.
  const owner = { email: 'olga@example.com', password: 'owner passphrase 4 vigil' };
  await addPerson(base, stage.accountId, owner, 'owner');
  const ownerPage = await (await stage.browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })).newPage();
  await signInAs(ownerPage, base, owner);
  await ownerPage.goto(`${base}/dashboard#/privacy`);
  await ownerPage.getByLabel('Value of identifier 1').fill(DAY.takeoverActor);
  await ownerPage.getByRole('button', { name: 'Search' }).click();
  await ownerPage.getByText(/^Stored about this subject: /).waitFor();
  await shoot(ownerPage, 'privacy');
  const phone = await stage.browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true });
  await phone.addCookies(await context.cookies());
  const small = await phone.newPage();
  for (const [name, hash] of [
    ['overview-phone', '#/'],
    ['event-phone', `#/events/${requestEvent}`],
    ['webhook-phone', `#/webhooks/${hook.json.id}`],
  ]) {
    await small.goto(`${base}/dashboard${hash}`);
    await small.getByRole('heading', { level: 1 }).waitFor();
    await shoot(small, name as string);
  }
  // The dark colour scheme follows the system's; the charts take its colours too.
  for (const [shot, hash] of [
    [page, '#/'],
    [page, `#/events/${requestEvent}`],
    [page, `#/alerts/${chain.id}`],
    [small, '#/'],
  ] as const) {
    await shot.emulateMedia({ colorScheme: 'dark' });
    await shot.goto(`${base}/dashboard${hash}`);
    await shot.getByRole('heading', { level: 1 }).waitFor();
    const name = hash === '#/' ? 'overview' : hash.startsWith('#/events') ? 'event' : 'kill-chain';
    await shoot(shot, `${name}${shot === small ? '-phone' : ''}-dark`);
  }
} finally {
  await stage.close();
  receiver.close();
}
