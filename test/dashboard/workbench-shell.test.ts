// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, provision } from '../process/service.js';
import { ATTACKER_IP, chromiumPresent, expectAccessible, openStage, sendAttack, signIn, type Stage } from './harness.js';

/** A query string the request scan reads as SQL injection, and markup that must stay text. */
const INJECTION = "id=1' UNION SELECT password FROM users--";
const HOSTILE = '<img src=x onerror="document.title=1">';
/** Events in one hour of the overview: the y axis reaches above a thousand. */
const VOLUME = 1_200;

/** A page that records every console error and uncaught exception, and every refused call. */
function watch(page: Page, problems: string[]): Page {
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  return page;
}

/** axe on the view in the light and the dark colour scheme. */
async function accessibleInBothSchemes(page: Page, view: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await expectAccessible(page, `${view} (${colorScheme})`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

describe.runIf(chromiumPresent())('dashboard workbench: detail pages, keys, webhooks and the shell', () => {
  let stage: Stage;
  let receiver: Server;
  const received: string[] = [];
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  let injectionId = '';
  let bruteForceId = '';

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // The webhook receiver listens on loopback, which the address guard refuses unless allowed.
    stage = await openStage({ VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32' });
    const base = stage.service.base;
    await sendAttack(base, stage.key);
    const injected = await api(base, 'POST', '/v1/events/batch', stage.key, {
      events: [
        {
          event: 'api.request',
          actor_id: 'mallory',
          ip: '203.0.113.9',
          host: 'web-1.example.com',
          session_id: 'sess-42',
          request: { method: 'GET', path: '/search', query: INJECTION, status: 500 },
          metadata: { device_id: 'dev-7', note: HOSTILE },
          colour: 'red',
        },
      ],
    });
    expect(injected.status).toBe(202);
    injectionId = injected.json.results[0].id;
    for (let sent = 0; sent < VOLUME; sent += 100) {
      const events = Array.from({ length: 100 }, () => ({ event: 'app.page_view', ip: '81.2.69.160' }));
      expect((await api(base, 'POST', '/v1/events/batch', stage.key, { events })).status).toBe(202);
    }
    const alerts = await api(base, 'GET', '/v1/alerts?limit=100', stage.key);
    bruteForceId = alerts.json.data.find((a: { type: string }) => a.type === 'auth.brute_force.account').id;
    context = await stage.browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = watch(await context.newPage(), problems);
  }, 120_000);

  afterAll(async () => {
    await stage?.close();
    receiver?.close();
  });

  it('loads signed out without an error, then signs in', async () => {
    await page.goto(`${stage.service.base}/dashboard`);
    await page.getByLabel('Secret API key').waitFor();
    const session = await fetch(`${stage.service.base}/dashboard/api/session`);
    expect(session.status).toBe(204);
    expect(problems).toEqual([]);
    await signIn(page, stage.service.base, stage.key);
  });

  it('shows the overview with readable axes, the riskiest entities as links and kill chain stages', async () => {
    await page.goto(`${stage.service.base}/dashboard#/`);
    const chart = page.locator('figure.chart');
    await expect.poll(() => chart.getAttribute('data-y-labels')).toMatch(/K/);
    const labels = ((await chart.getAttribute('data-y-labels')) ?? '').split(' ');
    // Compact labels (1.2K, not 1,200) that fit the axis.
    expect(labels.every((l) => l.length <= 4)).toBe(true);
    expect(labels).toContain('1K');
    const actors = page.getByRole('region', { name: 'Riskiest actors' });
    expect(await actors.getByRole('link', { name: 'alice@example.com' }).getAttribute('href')).toBe('#/actor/alice%40example.com');
    const addresses = page.getByRole('region', { name: 'Riskiest addresses' });
    expect(await addresses.getByRole('link', { name: ATTACKER_IP }).getAttribute('href')).toBe(`#/ip/${ATTACKER_IP}`);
    const stages = page.getByRole('list', { name: /^Stages of chain\.account_takeover/ });
    await expect.poll(() => stages.getByRole('link').count()).toBe(3);
    expect(await stages.getByRole('link').first().getAttribute('href')).toMatch(/^#\/events\/evt_/);
    await accessibleInBothSchemes(page, 'overview');
    expect(problems).toEqual([]);
  });

  it('shows every field of an event, the scan evidence and the raw JSON, with hostile text kept inert', async () => {
    await page.goto(`${stage.service.base}/dashboard#/events/${injectionId}`);
    const findings = page.getByTestId('scan-findings');
    await expect.poll(() => findings.textContent()).toContain('sql injection');
    expect(await findings.textContent()).toContain(`request.query${INJECTION}`);
    expect(await page.getByTestId('event-request').textContent()).toContain('path/search');
    const fields = page.getByRole('region', { name: 'Event' });
    expect(await fields.getByRole('link', { name: 'sess-42' }).getAttribute('href')).toBe('#/events?q=session_id%3A%22sess-42%22');
    expect(await fields.getByRole('link', { name: 'web-1.example.com' }).getAttribute('href')).toBe('#/host/web-1.example.com');
    expect(await fields.getByRole('link', { name: 'mallory' }).getAttribute('href')).toBe('#/actor/mallory');
    expect(await fields.textContent()).toContain('dev-7');
    expect(await page.getByRole('region', { name: /metadata\.extra/ }).textContent()).toContain('"colour": "red"');
    const raw = page.getByTestId('raw-json');
    expect(await raw.isVisible()).toBe(false);
    await page.getByText('Show the stored document').click();
    expect(JSON.parse((await raw.textContent()) ?? '')).toMatchObject({ id: injectionId, session_id: 'sess-42', request: { query: INJECTION } });
    expect(await page.getByText(HOSTILE).count()).toBeGreaterThan(0);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    await accessibleInBothSchemes(page, 'event page');
    expect(problems).toEqual([]);
  });

  it('keeps the alert status form on the current status and links to the events behind the alert', async () => {
    await page.goto(`${stage.service.base}/dashboard#/alerts/${bruteForceId}`);
    await expect.poll(() => page.getByRole('radio', { name: 'Open' }).isChecked()).toBe(true);
    await page.getByRole('radio', { name: 'Resolved' }).check();
    await page.getByRole('button', { name: 'Save status' }).click();
    await expect.poll(() => page.getByTestId('alert-status').textContent()).toBe('Resolved');
    expect(await page.getByRole('radio', { name: 'Resolved' }).isChecked()).toBe(true);
    await page.reload();
    await expect.poll(() => page.getByRole('radio', { name: 'Resolved' }).isChecked()).toBe(true);
    // Saving again without a choice keeps it resolved.
    await page.getByRole('button', { name: 'Save status' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Status set to Resolved.' }).count()).toBe(1);
    expect((await api(stage.service.base, 'GET', `/v1/alerts/${bruteForceId}`, stage.key)).json.status).toBe('resolved');
    const link = await page.getByTestId('alert-events-link').getAttribute('href');
    expect(link).toMatch(/^#\/events\?q=id%3A%22evt_/);
    await accessibleInBothSchemes(page, 'alert page');
    expect(problems).toEqual([]);
  });

  it('creates a key with a name and scopes, shows it once, rescopes, renames and revokes it', async () => {
    await page.goto(`${stage.service.base}/dashboard#/keys`);
    const create = page.getByRole('region', { name: 'Create a key' });
    await create.getByLabel('Name').fill('ci deploy');
    await create.getByRole('checkbox', { name: /^read/ }).uncheck();
    await create.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-secret').textContent()) ?? '';
    const listed = async () => (await api(stage.service.base, 'GET', '/v1/keys', stage.key)).json.keys.find((k: { name: string }) => k.name?.startsWith('ci'));
    const made = await listed();
    expect(made).toMatchObject({ name: 'ci deploy', scopes: ['ingest'], revoked_at: null });
    expect(secret.startsWith(made.prefix)).toBe(true);
    await accessibleInBothSchemes(page, 'keys');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('new-secret').count()).toBe(0);

    const row = page.getByTestId(`key-${made.id}`);
    await row.locator('summary').click();
    await row.getByLabel('Name').fill('ci');
    await row.getByRole('checkbox', { name: /^read/ }).check();
    await row.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await listed()).name).toBe('ci');
    expect((await listed()).scopes).toEqual(['ingest', 'read']);

    await page.getByRole('button', { name: 'Revoke ci', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await expect.poll(async () => (await listed()).revoked_at).not.toBeNull();
    await expect.poll(() => page.getByRole('region', { name: 'Revoked keys' }).textContent()).toContain('ci');
    expect(problems).toEqual([]);
  });

  it('adds a webhook, sends a test, shows the delivery with its answer, disables, rotates and deletes it', async () => {
    await page.goto(`${stage.service.base}/dashboard#/webhooks`);
    // A path of this attempt's own, so a retried attempt does not meet the first one's endpoint.
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook-${Date.now()}`;
    received.length = 0;
    const add = page.getByRole('region', { name: 'Add an endpoint' });
    await add.getByLabel('URL').fill(url);
    await add.getByLabel('Least severity').selectOption('high');
    await add.getByLabel(/^Alert types/).fill('auth.*, chain.*');
    await add.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByTestId('new-secret').waitFor();
    await expect.poll(() => page.getByRole('region', { name: 'Endpoints' }).getByRole('link', { name: url }).count()).toBe(1);
    await accessibleInBothSchemes(page, 'webhooks');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('heading', { name: `Webhook ${url}` }).waitFor();

    // The change form starts from the endpoint as it is.
    expect(await page.getByRole('region', { name: 'Change the endpoint' }).getByLabel('Least severity').inputValue()).toBe('high');
    await page.getByRole('button', { name: 'Send a test' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Test delivery: delivered, HTTP 200.' }).count()).toBe(1);
    expect(received).toHaveLength(1);
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    await expect.poll(() => deliveries.getByRole('row').count()).toBe(2);
    expect(await deliveries.textContent()).toContain('webhook.test');
    expect(await deliveries.textContent()).toContain('delivered, HTTP 200');

    await page.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => page.getByTestId('webhook-state').textContent()).toBe('disabled');
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.getByTestId('new-secret').waitFor();
    await accessibleInBothSchemes(page, 'webhook page');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete it and its deliveries' }).click();
    await page.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
    await expect
      .poll(async () => ((await api(stage.service.base, 'GET', '/v1/webhooks', stage.key)).json.data as { url: string }[]).filter((w) => w.url === url))
      .toEqual([]);
    expect(problems).toEqual([]);
  });

  it('keeps the focus on the control that applied a list filter', async () => {
    await page.goto(`${stage.service.base}/dashboard#/audit`);
    const action = page.getByLabel('Action (or prefix, like alert.)');
    await action.fill('key.');
    await action.press('Enter');
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/audit?action=key.');
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe('action');
    expect(problems).toEqual([]);
  });

  it('shows a Free account the threat-model offer without asking the service', async () => {
    const free = await provision(stage.service.base, 'free');
    const freeContext = await stage.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const freeProblems: string[] = [];
    const freePage = watch(await freeContext.newPage(), freeProblems);
    await signIn(freePage, stage.service.base, free.key);
    await freePage.goto(`${stage.service.base}/dashboard#/threat-models`);
    await freePage.getByText('Threat models come with the Pro and Business plans.').waitFor();
    expect(freeProblems).toEqual([]);
    await freeContext.close();
  });

  it('fits a phone: a compact header, addresses on one line, accessible in both schemes', async () => {
    const phone = await stage.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.addCookies(await context.cookies());
    const small = watch(await phone.newPage(), problems);
    for (const view of ['#/', `#/events/${injectionId}`, `#/alerts/${bruteForceId}`, '#/keys', '#/webhooks']) {
      await small.goto(`${stage.service.base}/dashboard${view}`);
      await small.getByRole('heading', { level: 1 }).waitFor();
      await small.waitForLoadState('networkidle');
      const header = await small.locator('header.top').boundingBox();
      expect(header?.height, `header height on ${view}`).toBeLessThanOrEqual(64);
      const overflow = await small.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `horizontal overflow on ${view}`).toBeLessThanOrEqual(0);
      await accessibleInBothSchemes(small, `${view} on a phone`);
    }
    await small.goto(`${stage.service.base}/dashboard#/`);
    const address = small.getByRole('region', { name: 'Riskiest addresses' }).getByRole('link', { name: ATTACKER_IP });
    await address.waitFor();
    expect(await address.evaluate((a) => a.getClientRects().length)).toBe(1);
    await phone.close();
    expect(problems).toEqual([]);
  });
});
