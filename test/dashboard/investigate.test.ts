// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../process/service.js';
import { DAY, FIXTURE_FEEDS, chromiumPresent, expectAccessible, openStage, sendDay, signIn, type Stage } from './harness.js';

/**
 * The investigation views against the real service and one seeded day: pivoting from an alert to
 * its actor, the actor's events and the address; searching with a time range, the histogram and
 * the exports; triaging a campaign at once; the live tail; accessibility in both themes and sizes.
 */
describe.runIf(chromiumPresent())('investigation in headless Chromium', () => {
  let stage: Stage;
  let context: BrowserContext;
  let page: Page;
  let base = '';
  const problems: string[] = [];

  beforeAll(async () => {
    stage = await openStage({ VIGIL_FEEDS_DIR: FIXTURE_FEEDS });
    base = stage.service.base;
    await sendDay(base, stage.key);
    context = await stage.browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('console', (m) => {
      // Refusals (the bad query the tests send) are logged by the browser as failed loads.
      if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 500) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    });
    await signIn(page, base, stage.key);
  }, 60_000);

  afterAll(async () => {
    await stage?.close();
  });

  const open = async (hash: string) => {
    await page.goto(`${base}/dashboard${hash}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
  };

  it('pivots from an alert to its actor, the actor’s other events and the address', async () => {
    await open('#/alerts?type=data.bulk_export');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'data.bulk_export' }) });
    await row.first().waitFor();
    await row.first().getByRole('link', { name: DAY.takeoverActor, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: `Actor ${DAY.takeoverActor}` }).waitFor();
    const facts = page.getByTestId('entity-facts');
    await expect.poll(() => facts.textContent()).toMatch(/Events\s*10/); // the home sign-in, 6 failures, the success, MFA off, the export
    const timeline = page.getByRole('region', { name: 'Timeline' });
    await expect.poll(() => timeline.getByRole('link', { name: 'data.exported' }).count()).toBe(1);
    expect(await timeline.getByRole('link', { name: 'data.bulk_export' }).count()).toBeGreaterThan(0);
    expect(await page.getByRole('region', { name: 'Addresses' }).getByRole('link', { name: DAY.takeoverIp }).count()).toBe(1);
    // Its other events: the events list searched by the actor.
    await facts.getByRole('link', { name: '10' }).click();
    await expect.poll(() => page.getByRole('searchbox', { name: 'Query' }).inputValue()).toBe(`actor_id:"${DAY.takeoverActor}"`);
    await expect.poll(() => page.getByRole('table', { name: 'Events', exact: true }).getByRole('row').count()).toBeGreaterThan(10);
    // Every row is the actor's (the actor column links to the actor, nothing else).
    expect(new Set(await page.getByRole('table', { name: 'Events', exact: true }).locator('tbody tr td:nth-child(3)').allTextContents())).toEqual(
      new Set([DAY.takeoverActor]),
    );
    await page.getByRole('table', { name: 'Events', exact: true }).getByRole('link', { name: DAY.takeoverIp }).first().click();
    await page.getByRole('heading', { level: 1, name: `Address ${DAY.takeoverIp}` }).waitFor();
    const network = page.getByRole('region', { name: 'Network' });
    await expect.poll(() => network.getByTestId('feeds').textContent()).toMatch(/firehol/);
    expect(await page.getByRole('region', { name: 'Actors' }).getByRole('link', { name: DAY.takeoverActor }).count()).toBe(1);
  });

  it('searches with a query and a time range, kept in the address, and sorts by risk', async () => {
    const now = Date.now();
    const q = `type:auth.login.failure AND ip:45.155.205.0/24`;
    await open('#/events');
    await page.getByRole('searchbox', { name: 'Query' }).fill(q);
    await page.getByLabel('Time').selectOption('custom');
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('From', { exact: true }).fill(local(now - 10 * 3_600_000));
    await page.getByLabel('Until', { exact: true }).fill(local(now - 6 * 3_600_000));
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Events', exact: true }).getByRole('row').count()).toBe(DAY.stuffedActors + 1);
    const hash = new URLSearchParams(new URL(page.url()).hash.split('?')[1]);
    expect(hash.get('q')).toBe(q);
    expect(hash.get('since')).toMatch(/^\d{4}-/);
    expect(hash.get('until')).toMatch(/^\d{4}-/);
    // A link reproduces the list.
    await page.reload();
    await expect.poll(() => page.getByRole('table', { name: 'Events', exact: true }).getByRole('row').count()).toBe(DAY.stuffedActors + 1);
    // Sorted by risk, then the exports of the whole result.
    await page.getByRole('link', { name: /^Risk/ }).click();
    await expect.poll(() => new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('sort')).toBe('-risk');
    await expect.poll(() => page.getByRole('columnheader', { name: /^Risk/ }).getAttribute('aria-sort')).toBe('descending');
  });

  it('draws the histogram of the result and exports it as CSV and NDJSON', async () => {
    const histogram = page.getByTestId('histogram');
    await expect.poll(() => histogram.textContent()).toMatch(new RegExp(`^${DAY.stuffedActors} events`));
    expect(await histogram.locator('canvas').count()).toBe(1);
    const [ndjson] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export NDJSON of the events' }).click()]);
    const lines = readFileSync(await ndjson.path(), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(DAY.stuffedActors);
    expect(lines.every((l) => (JSON.parse(l) as { ip: string }).ip.startsWith('45.155.205.'))).toBe(true);
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV of the events' }).click()]);
    expect(csv.suggestedFilename()).toMatch(/\.csv$/);
    expect(
      readFileSync(await csv.path(), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(DAY.stuffedActors + 1);
  });

  it('shows the service’s message for a bad query under the box and keeps the focus there', async () => {
    await open('#/events');
    const box = page.getByRole('searchbox', { name: 'Query' });
    await box.fill('type:(auth');
    await box.press('Enter');
    await expect.poll(() => page.getByTestId('query-problem').textContent()).toMatch(/position \d+/);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('q');
    expect(await box.getAttribute('aria-invalid')).toBe('true');
  });

  it('filters alerts by actor and address from the address', async () => {
    await open(`#/alerts?actor_id=${encodeURIComponent(DAY.takeoverActor)}`);
    await expect.poll(() => page.getByRole('table', { name: 'Alerts', exact: true }).getByRole('row').count()).toBeGreaterThan(1);
    for (const cell of await page.getByRole('table', { name: 'Alerts', exact: true }).getByRole('row').locator('td:nth-child(6)').allTextContents())
      expect(cell).toBe(DAY.takeoverActor);
    const byApi = await api(base, 'GET', `/v1/alerts?ip=${DAY.sshIp}`, stage.key);
    await open(`#/alerts?ip=${DAY.sshIp}`);
    await expect.poll(() => page.getByRole('table', { name: 'Alerts', exact: true }).getByRole('row').count()).toBe(byApi.json.data.length + 1);
    expect(byApi.json.data.length).toBeGreaterThan(0);
  });

  it('groups the alerts by campaign and resolves one campaign at once', async () => {
    const groups = await api(base, 'GET', '/v1/alerts/groups?status=open', stage.key);
    const campaign = (groups.json.data as { key: string; type: string; count: number; alert_ids: string[] }[])
      .filter((g) => g.type === 'auth.breached_password')
      .sort((a, b) => b.count - a.count)[0];
    expect(campaign?.count).toBeGreaterThanOrEqual(DAY.stuffedActors / DAY.stuffingIps.length);
    await open('#/alerts?status=open');
    await page.getByRole('button', { name: 'Group by campaign' }).click();
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: `${campaign?.count} alerts of the campaign auth.breached_password`, exact: false }) });
    await row.first().waitFor();
    await row.first().getByRole('checkbox').check();
    const bulk = page.getByRole('form', { name: 'Change the selected alerts' });
    await bulk.getByLabel('Status').selectOption('resolved');
    await bulk.getByLabel('Note').fill('Stuffing wave blocked at the edge');
    await bulk.getByRole('button', { name: 'Apply to selected' }).click();
    await expect.poll(() => page.getByTestId('bulk-done').textContent()).toMatch(new RegExp(`^${campaign?.count} alerts changed`));
    for (const id of campaign?.alert_ids ?? []) expect((await api(base, 'GET', `/v1/alerts/${id}`, stage.key)).json.status).toBe('resolved');
  });

  it('shows a newly ingested event live, and counts what waits while paused', async () => {
    await open('#/events');
    await page.getByRole('button', { name: 'Live' }).click();
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/^Live:/);
    await api(base, 'POST', '/v1/events', stage.key, { event: 'auth.login.success', actor_id: 'late@example.com', ip: '81.2.69.200' });
    await page.getByRole('table', { name: 'Events', exact: true }).getByRole('link', { name: 'late@example.com' }).waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await api(base, 'POST', '/v1/events', stage.key, { event: 'auth.login.success', actor_id: 'later@example.com', ip: '81.2.69.201' });
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Paused: 1 new events waiting/);
    expect(await page.getByRole('table', { name: 'Events', exact: true }).getByRole('link', { name: 'later@example.com' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('table', { name: 'Events', exact: true }).getByRole('link', { name: 'later@example.com' }).waitFor();
    await page.getByRole('button', { name: 'Live' }).click();
  });

  it('passes axe in light and dark, on a laptop and a phone', async () => {
    const views = [
      `#/events?q=${encodeURIComponent('type:auth.login.failure')}&since=24h`,
      '#/alerts',
      '#/alerts?group=campaign',
      `#/actor/${encodeURIComponent(DAY.takeoverActor)}`,
      `#/ip/${DAY.takeoverIp}`,
      `#/host/${DAY.host}`,
      '#/privacy',
    ];
    for (const size of [
      { width: 1440, height: 900 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size);
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        for (const view of views) {
          await open(view);
          await page.waitForLoadState('networkidle');
          await expectAccessible(page, `${view} ${colorScheme} ${size.width}`);
        }
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 120_000);

  it('logged no error in the browser', () => {
    expect(problems).toEqual([]);
  });
});
