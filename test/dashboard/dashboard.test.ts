// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, api, provision } from '../process/service.js';
import { ATTACKER_IP, DASHBOARD_DIST, VICTIM, chromiumPresent, expectAccessible, openStage, sendAttack, signIn, type Stage } from './harness.js';

const FIRST_LOAD_BUDGET = 80 * 1024;

/** A link of the section navigation. */
const section = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

/** The session cookie's value, as the browser holds it. */
async function sessionCookie(context: BrowserContext) {
  return (await context.cookies()).find((c) => c.name === 'vigil_session');
}

describe.runIf(chromiumPresent())('dashboard in headless Chromium against the real service', () => {
  let stage: Stage;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  let oldCookie = '';
  let alertId = '';

  beforeAll(async () => {
    stage = await openStage();
    context = await stage.browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    page.on('console', (m) => {
      // Refusals the tests provoke (a wrong key, an invalid allowlist) are logged by the browser as failed loads.
      if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 500) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    });
  }, 60_000);

  afterAll(async () => {
    await stage?.close();
  });

  it('serves the page with a Content-Security-Policy that allows scripts from files only', async () => {
    const res = await fetch(`${stage.service.base}/dashboard`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('keeps first-load JavaScript under 80 KB compressed', async () => {
    const html = readFileSync(join(DASHBOARD_DIST, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/dashboard\/([^"]+)"/g)].map((m) => m[1] as string);
    expect(scripts.length).toBeGreaterThan(0);
    let gzipBytes = 0;
    for (const file of scripts) {
      // What the service sends: the same gzip it serves to a browser that accepts it.
      const res = await fetch(`${stage.service.base}/dashboard/${file}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.status).toBe(200);
      gzipBytes += gzipSync(readFileSync(join(DASHBOARD_DIST, file)), { level: 9 }).length;
    }
    console.log(`first-load JavaScript: ${scripts.join(', ')} = ${(gzipBytes / 1024).toFixed(1)} KB gzip`);
    expect(gzipBytes).toBeLessThan(FIRST_LOAD_BUDGET);
  });

  it('refuses a wrong key and keeps it out of browser storage', async () => {
    await page.goto(`${stage.service.base}/dashboard`);
    await expectAccessible(page, 'sign-in');
    await page.getByLabel('Secret API key').fill('vsk_' + 'x'.repeat(40));
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Invalid API key/);
    expect(await sessionCookie(context)).toBeUndefined();
    await page.getByLabel('Secret API key').fill('not a key');
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Invalid API key/);
    expect(await page.getByRole('navigation', { name: 'Sections' }).count()).toBe(0);
  });

  it('signs in with the secret key into an HttpOnly, SameSite=Strict cookie with an expiry', async () => {
    await signIn(page, stage.service.base, stage.key);
    const cookie = await sessionCookie(context);
    expect(cookie).toBeDefined();
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    expect(cookie?.secure).toBe(false); // served over plain HTTP here; Secure over TLS is checked below
    expect(cookie?.expires ?? 0).toBeGreaterThan(Date.now() / 1000 + 3600);
    oldCookie = cookie?.value ?? '';
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
    expect(storage).not.toContain(stage.key);
    expect(storage).not.toContain(oldCookie);
  });

  it('shows an attack sent through the API on the overview', async () => {
    await section(page, 'Overview').click();
    await expect.poll(() => page.getByText('No events in this range.').count()).toBe(2);
    await sendAttack(stage.service.base, stage.key);
    await page.getByRole('button', { name: 'Refresh' }).click();
    const actors = page.getByRole('region', { name: 'Riskiest actors' });
    await expect.poll(() => actors.getByRole('link', { name: VICTIM }).count()).toBe(1);
    const addresses = page.getByRole('region', { name: 'Riskiest addresses' });
    expect(await addresses.getByRole('link', { name: ATTACKER_IP }).count()).toBe(1);
    const chains = page.getByRole('region', { name: 'Kill chains in progress' });
    expect(await chains.getByRole('link', { name: 'chain.account_takeover' }).count()).toBe(1);
    const severities = await page.getByRole('region', { name: 'Open alerts by severity' }).textContent();
    // Critical: the login that worked after the brute force, and the account-takeover chain.
    expect(severities).toMatch(/critical\s*2/);
    expect(await page.locator('.chart canvas').count()).toBe(1);
    expect(await page.getByRole('note').count()).toBe(0);
    await expectAccessible(page, 'overview');
  });

  it('says when the overview read only the newest events of a range too large for it', async () => {
    // The answer of a range past the overview's bound: the service's own answer with the flag set.
    await page.route('**/dashboard/api/overview*', async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, json: Object.assign({}, await response.json(), { events_capped: true }) });
    });
    try {
      await page.getByRole('button', { name: 'Refresh' }).click();
      const note = page.getByRole('region', { name: 'Events and alerts over time' }).getByRole('note');
      await expect.poll(() => note.textContent()).toMatch(/newest 50,000 events/);
      expect(await note.getByRole('link', { name: 'Search the events' }).getAttribute('href')).toBe('#/events');
    } finally {
      await page.unroute('**/dashboard/api/overview*');
    }
  });

  it('opens the alert, walks to its events and back, and shows the kill chain on a timeline', async () => {
    await section(page, 'Alerts').click();
    await page.getByRole('link', { name: 'auth.brute_force.account' }).click();
    await page.getByRole('heading', { name: /auth\.brute_force\.account/ }).waitFor();
    alertId = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    expect(alertId).toMatch(/^alr_/);
    await expectAccessible(page, 'alert');
    const events = page.getByRole('region', { name: 'Events behind this alert' });
    await expect.poll(() => events.getByRole('row').count()).toBeGreaterThan(1);
    await events.getByRole('link').first().click();
    await page.getByRole('heading', { name: /auth\.login\.failure/ }).waitFor();
    const breakdown = page.getByRole('region', { name: 'Score breakdown' });
    expect(await breakdown.getByRole('cell', { name: 'base' }).count()).toBe(1);
    expect(await breakdown.getByRole('cell', { name: 'network.sql_injection' }).count()).toBe(1);
    const enrichment = page.getByRole('region', { name: 'Enrichment' });
    const findings = page.getByRole('region', { name: 'Request scan findings' });
    expect(await findings.textContent()).toContain("sql injectionmetadata.path/login?user=admin' OR '1'='1");
    expect(await enrichment.textContent()).toMatch(/AS\d+/);
    // The user agent enrichment is read by its snake_case API names.
    expect(await enrichment.textContent()).toMatch(/automated · scanner: sqlmap/);
    expect(await enrichment.getByRole('link', { name: 'DB-IP' }).count()).toBe(1);
    await expectAccessible(page, 'event');
    await page.goBack();
    await page.getByRole('heading', { name: /auth\.brute_force\.account/ }).waitFor();

    await section(page, 'Alerts').click();
    await page.getByRole('link', { name: 'chain.account_takeover' }).click();
    const timeline = page.getByRole('region', { name: 'Kill chain stages' });
    await expect.poll(() => timeline.getByRole('listitem').count()).toBe(3);
    await page.goBack();
    await expectAccessible(page, 'alerts');
  });

  it('changes the alert status with a note', async () => {
    await page.goto(`${stage.service.base}/dashboard#/alerts/${alertId}`);
    await page.getByRole('radio', { name: 'Resolved' }).check();
    await page.getByLabel('Note (optional)').fill('Blocked the address at the edge.');
    await page.getByRole('button', { name: 'Save status' }).click();
    await expect.poll(() => page.getByTestId('alert-status').textContent()).toBe('Resolved');
    const notes = page.getByRole('region', { name: 'Notes' });
    await expect.poll(() => notes.textContent()).toContain('Blocked the address at the edge.');
    const stored = await api(stage.service.base, 'GET', `/v1/alerts/${alertId}`, stage.key);
    expect(stored.json.status).toBe('resolved');
    // The list filters: a select applies when changed.
    await section(page, 'Alerts').click();
    // By role: the alert's own page, still shown for a moment, labels other things "Status".
    await page.getByRole('combobox', { name: 'Status' }).selectOption('resolved');
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    expect(await page.getByRole('link', { name: 'auth.brute_force.account' }).count()).toBe(1);
    await page.getByRole('link', { name: 'Clear' }).click();
    await expect.poll(() => page.getByRole('row').count()).toBeGreaterThan(2);
    // The older filter links keep working beside the query.
    await page.goto(`${stage.service.base}/dashboard#/alerts?type=chain.account_takeover`);
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    expect(await page.getByRole('link', { name: 'chain.account_takeover' }).count()).toBe(1);
  });

  it('filters and pages the event list', async () => {
    await section(page, 'Events').click();
    const search = async (q: string) => {
      await page.getByRole('searchbox', { name: 'Query' }).fill(q);
      await page.getByRole('button', { name: 'Search' }).click();
    };
    await search(`ip:${ATTACKER_IP} type:auth.login.*`);
    await expect.poll(() => page.getByRole('row').count()).toBe(14); // header + 12 failures + 1 success
    await search(`ip:${ATTACKER_IP} type:auth.login.* risk:>=100`);
    await expect.poll(() => page.getByText('No event matches this search.').count()).toBe(1);
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.goto(`${stage.service.base}/dashboard#/events?limit=8`);
    const seen = new Set<string>();
    const firstHref = () => page.getByRole('table').locator('tbody').getByRole('link').first().getAttribute('href');
    let previous: string | null = null;
    for (const expected of [8, 8, 4]) {
      // The next page has rendered once its first row differs from the page before (both may hold 8 rows).
      await expect.poll(async () => (await page.getByRole('row').count()) === expected + 1 && (await firstHref()) !== previous).toBe(true);
      // Each row links to its event (the actor and address cells link to their pages).
      for (const link of await page.getByRole('table').getByRole('link').all()) {
        const to = (await link.getAttribute('href')) ?? '';
        if (to.startsWith('#/events/')) seen.add(to);
      }
      previous = await firstHref();
      if (expected === 8) await page.getByRole('link', { name: 'Next page' }).click();
    }
    expect(seen.size).toBe(20); // every event once across the pages
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await page.getByRole('link', { name: 'First page' }).click();
    await expect.poll(() => page.getByRole('row').count()).toBe(9);
    await section(page, 'Events').click();
    // The unpaged list (all 20 events) has replaced the paged one, so the form filled next is the one submitted.
    await expect.poll(() => page.getByRole('row').count()).toBe(21);
    await search('tag:"inferred:auth.logout"');
    await expect.poll(() => page.getByRole('row').count()).toBe(3);
    await page.getByRole('link', { name: /./ }).filter({ hasText: /\d{4}/ }).first().click();
    await expect.poll(() => page.getByRole('link', { name: 'inferred:auth.logout' }).count()).toBe(1);
    await page.goBack();
    await expectAccessible(page, 'events');
  });

  it('shows usage: this month, remaining quota and the daily chart', async () => {
    await section(page, 'Usage').click();
    await expect.poll(() => page.getByTestId('usage-used').textContent()).toBe('20');
    const usage = await api(stage.service.base, 'GET', '/v1/usage', stage.key);
    expect(await page.getByTestId('usage-remaining').textContent()).toBe(Number(usage.json.remaining).toLocaleString('en-US'));
    expect(await page.locator('.chart canvas').count()).toBe(1);
    await expectAccessible(page, 'usage');
  });

  it('changes a risk threshold, and shows validation messages', async () => {
    await section(page, 'Settings').click();
    await page.getByLabel('Challenge from score').fill('40');
    await page.getByRole('button', { name: 'Save thresholds' }).click();
    await expect.poll(() => page.getByText('Risk thresholds saved.').count()).toBe(1);
    expect((await api(stage.service.base, 'GET', '/v1/settings', stage.key)).json.risk).toEqual({ challenge: 40, block: 80 });
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.getByLabel('Value').fill('203.0.113.0/24');
    await page.getByLabel('Detectors').fill('no_such_detector');
    await page.getByRole('button', { name: 'Save allowlists' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/unknown detector "no_such_detector"/);
    await page.getByLabel('Detectors').fill('brute_force');
    await page.getByRole('button', { name: 'Save allowlists' }).click();
    await expect.poll(() => page.getByText('Allowlists saved.').count()).toBe(1);
    expect((await api(stage.service.base, 'GET', '/v1/settings', stage.key)).json.allowlists).toEqual({
      ips: [{ value: '203.0.113.0/24', detectors: ['brute_force'] }],
    });
    await expectAccessible(page, 'settings');
  });

  it('writes a threat model, shows the service’s validation messages, dry-runs it, saves versions and enables it', async () => {
    const base = stage.service.base;
    await section(page, 'Threat models').click();
    await expect.poll(() => page.getByText('No threat model yet.').count()).toBe(1);
    await expectAccessible(page, 'threat models');
    await page.getByRole('link', { name: 'New model' }).click();
    const editor = page.getByLabel('Rule (JSON)', { exact: true });
    await editor.waitFor();
    expect(await page.getByRole('checkbox', { name: /Enabled/ }).isChecked()).toBe(false); // tested before it is enabled

    // The service's refusal, each message with the path it concerns.
    const model = {
      name: 'Scanner logins',
      match: { event: 'auth.login.failure', where: { field: 'user_agent', op: 'regex', value: 'sqlmap(?=/)' } },
      threshold: { count: 5, group_by: 'ip', window_seconds: 3600 },
      outcome: { alert: 'custom.scanner_logins', severity: 'high' },
    };
    await editor.fill(JSON.stringify(model, null, 2));
    await page.getByRole('button', { name: 'Create model' }).click();
    await expect.poll(() => page.getByTestId('problems').textContent()).toMatch(/match\.where\.value: not a valid RE2 regular expression/);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Show match.where.value in the rule' }).click();
    expect(await editor.evaluate((el: HTMLTextAreaElement) => el.value.slice(el.selectionStart, el.selectionEnd))).toBe('"sqlmap(?=/)"');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('TEXTAREA');
    await expectAccessible(page, 'threat-model editor with problems');

    // A dry run over the attack's stored events: the 12 scanner failures match, one alert would be raised.
    await editor.fill(JSON.stringify({ ...model, match: { ...model.match, where: { field: 'user_agent', op: 'contains', value: 'sqlmap' } } }, null, 2));
    await page.getByRole('button', { name: 'Run dry run' }).click();
    await expect.poll(() => page.getByTestId('dry-run-summary').textContent()).toBe('Scanned 20 events: 12 matched, 1 alert would be raised.');
    expect(await page.getByTestId('problems').count()).toBe(0);
    const wouldRaise = page.getByRole('table', { name: 'Alerts the rule would have raised' });
    expect(await wouldRaise.getByRole('cell', { name: 'custom.scanner_logins' }).count()).toBe(1);
    expect(await wouldRaise.getByRole('cell', { name: `ip:${ATTACKER_IP}` }).count()).toBe(1);
    expect(await page.getByRole('table', { name: 'Stored events the rule matches' }).getByRole('link').count()).toBe(12);
    await expectAccessible(page, 'threat-model dry run');
    const custom = await api(base, 'GET', '/v1/alerts?type=custom.scanner_logins', stage.key);
    expect(custom.json.data).toEqual([]); // the dry run raised nothing

    // Saved disabled (version 1), then saved again as a Sigma rule (version 2).
    await page.getByRole('button', { name: 'Create model' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved as version 1.' }).count()).toBe(1);
    const id = decodeURIComponent(new URL(page.url()).hash.split('/')[2]?.split('?')[0] ?? '');
    expect(id).toMatch(/^tm_/);
    expect((await api(base, 'GET', `/v1/threat-models/${id}`, stage.key)).json).toMatchObject({ version: 1, enabled: false });
    await page.getByRole('radio', { name: 'Sigma rule (YAML)' }).check();
    const sigma = page.getByLabel('Rule (Sigma YAML)', { exact: true });
    await sigma.fill('title: Scanner logins\ndetection:\n  s:\n    UserAgent|contains: sqlmap\n  condition: s\nlevel: high\n');
    await page.getByRole('button', { name: 'Run dry run' }).click();
    await expect.poll(() => page.getByTestId('dry-run-summary').textContent()).toMatch(/^Scanned 20 events: 12 matched/);
    await page.getByRole('button', { name: 'Save new version' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved as version 2.' }).count()).toBe(1);
    const versions = page.getByRole('region', { name: 'Versions' });
    await expect.poll(() => versions.getByRole('listitem').count()).toBe(2);
    expect(await versions.getByText(/Version 2 \(current\).*Sigma/).count()).toBe(1);
    await versions.getByText(/^Version 1 /).click();
    await versions.getByRole('button', { name: 'Load version 1 into the editor' }).click();
    expect(await editor.inputValue()).toContain('"op": "contains"');
    await expectAccessible(page, 'threat-model versions');

    // Enabled from the list, with the keyboard.
    await page.getByRole('link', { name: '← Threat models' }).click();
    const toggle = page.getByRole('button', { name: 'Enable Scanner logins' });
    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Scanner logins enabled (version 3).' }).count()).toBe(1);
    expect((await api(base, 'GET', `/v1/threat-models/${id}`, stage.key)).json).toMatchObject({ version: 3, enabled: true, format: 'sigma' });
    await expectAccessible(page, 'threat models with a model');
  });

  it('shows a model the service suspended for its cost, with the reason, and re-enables it', async () => {
    const base = stage.service.base;
    const created = await api(base, 'POST', '/v1/threat-models', stage.key, {
      name: 'Digits after an a',
      match: { event: 'custom.probe', where: { field: 'metadata.x', op: 'regex', value: '(?s)a.{0,998}[0-9]' } },
      outcome: { alert: 'custom.digits', severity: 'low' },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    // Ten requests of events whose text is too long for the regex's budget: sustained, so it is suspended.
    for (let i = 0; i < 10; i++) {
      const events = Array.from({ length: 5 }, () => ({ event: 'custom.probe', metadata: { x: `a${'z'.repeat(15_000)}` } }));
      expect((await api(base, 'POST', '/v1/events/batch', stage.key, { events })).status).toBe(202);
    }
    await expect.poll(async () => (await api(base, 'GET', `/v1/threat-models/${id}`, stage.key)).json.suspended).not.toBeNull();

    await section(page, 'Overview').click();
    await section(page, 'Threat models').click();
    const list = page.getByRole('table', { name: 'Threat models' });
    await expect.poll(() => list.getByText('Suspended', { exact: true }).count()).toBe(1);
    expect(await list.getByText(/over the budget of 1,000 µs/).count()).toBe(1);
    await expectAccessible(page, 'threat models with a suspended model');
    await list.getByRole('link', { name: 'Digits after an a' }).click();
    await expect.poll(() => page.getByTestId('suspension').textContent()).toMatch(/^Suspended Suspended at .*over the budget of 1,000 µs/);
    await expectAccessible(page, 'editor of a suspended model');

    await page.getByRole('link', { name: '← Threat models' }).click();
    await page.getByRole('button', { name: 'Re-enable Digits after an a' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Digits after an a enabled (version 2).' }).count()).toBe(1);
    expect((await api(base, 'GET', `/v1/threat-models/${id}`, stage.key)).json).toMatchObject({ version: 2, enabled: true, suspended: null });
    await expect.poll(() => list.getByText('Suspended', { exact: true }).count()).toBe(0);
  });

  it('shows a Free account what its plan offers instead of the threat models', async () => {
    const free = await provision(stage.service.base, 'free');
    const freeContext = await stage.browser.newContext({ viewport: { width: 1280, height: 860 } });
    const freePage = await freeContext.newPage();
    await signIn(freePage, stage.service.base, free.key);
    for (const view of ['#/threat-models', '#/threat-models/new']) {
      await freePage.goto(`${stage.service.base}/dashboard${view}`);
      await expect.poll(() => freePage.getByText('Threat models come with the Pro and Business plans.').count()).toBe(1);
      expect(await freePage.getByRole('alert').count()).toBe(0);
      expect(await freePage.getByRole('textbox').count()).toBe(0);
    }
    await expectAccessible(freePage, 'threat models on Free');
    await freeContext.close();
  });

  it('is keyboard reachable and fits a phone screen', async () => {
    await page.goto(`${stage.service.base}/dashboard#/`);
    await page.reload();
    await page.getByRole('region', { name: 'Riskiest actors' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Overview');
    const phone = await stage.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.addCookies([{ name: 'vigil_session', value: oldCookie, url: stage.service.base, httpOnly: true, sameSite: 'Strict' }]);
    const small = await phone.newPage();
    for (const view of ['#/', '#/events', '#/alerts', '#/usage', '#/settings', '#/threat-models', '#/threat-models/new']) {
      await small.goto(`${stage.service.base}/dashboard${view}`);
      await small.getByRole('heading', { level: 1 }).waitFor();
      await small.waitForLoadState('networkidle');
      const overflow = await small.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `horizontal overflow on ${view}`).toBeLessThanOrEqual(0);
    }
    await phone.close();
  });

  it('signs out: the cookie is cleared and the old session is refused', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Secret API key').waitFor();
    expect(await sessionCookie(context)).toBeUndefined();
    const res = await fetch(`${stage.service.base}/v1/events`, { headers: { cookie: `vigil_session=${oldCookie}` } });
    expect(res.status).toBe(401);
    expect(problems).toEqual([]);
  });

  describe('session rules over HTTP', () => {
    const base = () => stage.service.base;
    const open = async (headers: Record<string, string> = {}) => {
      const res = await fetch(`${base()}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ key: stage.key }),
      });
      const cookie = /vigil_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
      return { res, cookie, setCookie: res.headers.get('set-cookie') ?? '', body: (await res.json()) as { csrf_token?: string } };
    };

    it('requires the CSRF token on every state-changing call made with the cookie', async () => {
      const { cookie, body } = await open();
      const patch = (headers: Record<string, string>) =>
        fetch(`${base()}/v1/settings`, {
          method: 'PATCH',
          headers: { cookie: `vigil_session=${cookie}`, 'content-type': 'application/json', ...headers },
          body: '{"risk":{"block":85}}',
        });
      expect((await patch({})).status).toBe(403);
      expect((await patch({ 'x-csrf-token': 'wrong' })).status).toBe(403);
      expect((await patch({ 'x-csrf-token': body.csrf_token as string })).status).toBe(200);
      const read = await fetch(`${base()}/v1/settings`, { headers: { cookie: `vigil_session=${cookie}` } });
      expect(read.status).toBe(200);
      expect(((await read.json()) as { risk: unknown }).risk).toEqual({ block: 85 }); // a part given replaces that part
      const signOut = await fetch(`${base()}/dashboard/api/session`, { method: 'DELETE', headers: { cookie: `vigil_session=${cookie}` } });
      expect(signOut.status).toBe(403);
    });

    it('sets Secure on the cookie when served over TLS (behind a trusted proxy)', async () => {
      const plain = await open();
      expect(plain.setCookie).toMatch(/HttpOnly/);
      expect(plain.setCookie).toMatch(/SameSite=Strict/);
      expect(plain.setCookie).toMatch(/Max-Age=\d+/);
      expect(plain.setCookie).not.toMatch(/Secure/);
      const tls = await open({ 'x-forwarded-proto': 'https' });
      expect(tls.setCookie).toMatch(/; Secure/);
    });

    it('refuses sign-in from another origin and with a publishable key', async () => {
      expect((await open({ origin: 'https://evil.example' })).res.status).toBe(403);
      const pk = await api(base(), 'POST', `/admin/accounts/${stage.accountId}/keys`, ADMIN, {
        kind: 'publishable',
        allowed_origins: ['https://shop.example'],
      });
      const res = await fetch(`${base()}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: pk.json.key }),
      });
      expect(res.status).toBe(403);
    });

    it('ends the session when its key is revoked', async () => {
      const key = await api(base(), 'POST', `/admin/accounts/${stage.accountId}/keys`, ADMIN, { kind: 'secret' });
      const res = await fetch(`${base()}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: key.json.key }),
      });
      const cookie = /vigil_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
      expect((await fetch(`${base()}/v1/alerts`, { headers: { cookie: `vigil_session=${cookie}` } })).status).toBe(200);
      expect((await api(base(), 'DELETE', `/admin/keys/${key.json.id}`, ADMIN)).status).toBeLessThan(300);
      expect((await fetch(`${base()}/v1/alerts`, { headers: { cookie: `vigil_session=${cookie}` } })).status).toBe(401);
    });
  });
});
