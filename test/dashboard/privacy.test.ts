// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { api, provision, type Service } from '../process/service.js';
import { describePostgres } from '../storage/pg-helpers.js';
import { addPerson, chromiumPresent, DAY, ensureDashboardBuilt, expectAccessible, oneService, signInAs, type Topology, twoServicesSharing } from './harness.js';

const OWNER = { email: 'olga@example.com', password: 'owner passphrase 4 vigil' };
const VIEWER = { email: 'vera@example.com', password: 'viewer passphrase 4 vigil' };

/** The person asking to be forgotten, known by an actor id, an email and a device id that is markup. */
const SUBJECT = { actor: 'dana', email: 'dana@example.com', device: '<img src=x onerror="document.title=\'pwned\'">' } as const;
const SUBJECT_EVENTS = 13;
/** Someone else, whose events stay. */
const OTHER = { actor: 'erin', email: 'erin@example.com' } as const;
const OTHER_EVENTS = 3;

const redis = await connectTestRedis('dashboard-privacy');
/** The pseudonym master secret: the suppression list holds keyed hashes made with it. */
const PSEUDONYMS = { VIGIL_PSEUDONYM_SECRET: 'privacy view test master secret, long enough to key pseudonyms' };

/** A call the page's own session makes, with its CSRF token: the status the service answers. */
function statusFromPage(page: Page, method: string, path: string, body: object): Promise<number> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const session = (await (await fetch('/dashboard/api/session')).json()) as { csrf_token: string };
      const res = await fetch(path, {
        method,
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
        body: JSON.stringify(body),
      });
      return res.status;
    },
    { method, path, body },
  );
}

const isFocused = (page: Page, label: string | RegExp) => page.getByLabel(label).evaluate((el) => el === document.activeElement);

/**
 * The privacy view on one deployment: `owners` is where the owner works, `viewers` where the
 * viewer does (two processes on one PostgreSQL and Redis in scale-out mode).
 */
function privacyFlow(mode: string, open: () => Promise<Topology>) {
  describe(`privacy view in headless Chromium (${mode})`, () => {
    let owners: Service;
    let viewers: Service;
    let close: () => Promise<void>;
    let browser: Browser;
    let owner: Page;
    let viewer: Page;
    let key: string;
    const problems: string[] = [];

    beforeAll(async () => {
      ensureDashboardBuilt();
      ({ owners, viewers, close } = await open());
      const account = await provision(owners.base, 'pro');
      key = account.key;
      const events: Record<string, unknown>[] = [];
      for (let i = 0; i < SUBJECT_EVENTS - 1; i++)
        events.push({ event: 'auth.login.failure', actor_id: SUBJECT.actor, email: SUBJECT.email, ip: DAY.homeIp, metadata: { device_id: SUBJECT.device } });
      events.push({ event: 'auth.login.success', actor_id: SUBJECT.actor, ip: DAY.homeIp });
      for (let i = 0; i < OTHER_EVENTS; i++) events.push({ event: 'auth.login.success', actor_id: OTHER.actor, email: OTHER.email, ip: '81.2.69.142' });
      const sent = await api(owners.base, 'POST', '/v1/events/batch', key, { events });
      expect(sent.status, JSON.stringify(sent.json)).toBe(202);
      await addPerson(owners.base, account.accountId, OWNER, 'owner');
      await addPerson(owners.base, account.accountId, VIEWER, 'viewer');
      browser = await launchChromium();
      owner = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      viewer = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      for (const page of [owner, viewer]) {
        page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
        page.on('dialog', (d) => problems.push(`dialog: ${d.message()}`));
      }
      await signInAs(owner, owners.base, OWNER);
      await signInAs(viewer, viewers.base, VIEWER);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await close?.();
    }, 60_000);

    it('finds what is stored about a subject known by several identifiers, with hostile text kept inert', async () => {
      await owner.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Privacy', exact: true }).click();
      await owner.getByRole('heading', { name: 'Data subject' }).waitFor();
      await owner.getByLabel('Value of identifier 1').fill(SUBJECT.actor);
      await owner.getByRole('button', { name: 'Add identifier' }).click();
      await owner.getByLabel('Kind of identifier 2').selectOption('email');
      await owner.getByLabel('Value of identifier 2').fill(SUBJECT.email);
      await owner.getByRole('button', { name: 'Add identifier' }).click();
      await owner.getByLabel('Kind of identifier 3').selectOption('device_id');
      await owner.getByLabel('Value of identifier 3').fill(SUBJECT.device);
      await owner.getByRole('button', { name: 'Search' }).click();
      const status = owner.getByText(/^Stored about this subject: /);
      await expect.poll(() => status.textContent()).toMatch(new RegExp(`^Stored about this subject: ${SUBJECT_EVENTS} events, [1-9]\\d* alerts?, 0 notes\\.$`));
      const rows = owner.getByRole('table', { name: /^The first \d+ of \d+ stored records$/ }).getByRole('row');
      expect(await rows.count()).toBeGreaterThan(SUBJECT_EVENTS);
      expect(await rows.getByRole('link', { name: 'auth.login.failure' }).count()).toBe(SUBJECT_EVENTS - 1);
      expect(await owner.locator('main img').count()).toBe(0);
      await expectAccessible(owner, 'privacy: subject found');
    });

    it('downloads the export as NDJSON: every record of the subject and nothing of anyone else', async () => {
      const [download] = await Promise.all([owner.waitForEvent('download'), owner.getByRole('button', { name: 'Download NDJSON' }).click()]);
      expect(download.suggestedFilename()).toMatch(/^vigil-subject-.+\.ndjson$/);
      const records = readFileSync(await download.path(), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; actor_id?: string });
      const events = records.filter((r) => r.type === 'event');
      expect(events).toHaveLength(SUBJECT_EVENTS);
      expect(events.every((e) => e.actor_id === SUBJECT.actor)).toBe(true);
      const alerts = records.filter((r) => r.type === 'alert').length;
      expect(await owner.getByText(/^Stored about this subject: /).textContent()).toContain(`${alerts} alert`);
      expect(JSON.stringify(records)).not.toContain(OTHER.actor);
    });

    it('erases after a confirmation that names each identifier, and follows the job to done across a reload', async () => {
      await owner.getByRole('button', { name: 'Erase…' }).click();
      const confirmation = owner.getByTestId('erase-confirmation');
      await confirmation.waitFor();
      const named = (await confirmation.getByRole('listitem').allTextContents()).slice(0, 3);
      expect(named).toEqual([`Actor id: ${SUBJECT.actor}`, `Email: ${SUBJECT.email}`, `Device id: ${SUBJECT.device}`]);
      expect(await confirmation.textContent()).toContain(`the ${SUBJECT_EVENTS} events found are deleted`);
      expect(await isFocused(owner, 'Type “erase” to confirm')).toBe(true);
      await expectAccessible(owner, 'privacy: erase confirmation');
      const erase = owner.getByRole('button', { name: 'Erase permanently' });
      expect(await erase.isDisabled()).toBe(true);
      // Cancelling changes nothing and gives the focus back to the control that asked.
      await owner.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => owner.getByRole('button', { name: 'Erase…' }).evaluate((el) => el === document.activeElement)).toBe(true);
      await owner.getByRole('button', { name: 'Erase…' }).click();
      await owner.getByLabel('Type “erase” to confirm').fill('erase');
      // A suppression longer than the service allows is refused at its field, which takes the focus.
      const suppress = owner.getByLabel(/^Drop their later events for/);
      await suppress.fill('5000');
      await erase.click();
      await expect.poll(() => suppress.getAttribute('aria-invalid')).toBe('true');
      expect(await owner.locator('#problems-suppress').textContent()).toContain('suppress_days');
      expect(await isFocused(owner, /^Drop their later events for/)).toBe(true);
      await suppress.fill('30');
      expect(await confirmation.getByTestId('suppression').textContent()).toBe(
        'their later events are answered “dropped” and not kept for 30 days after the erasure.',
      );
      await erase.click();
      await expect.poll(() => new URLSearchParams(new URL(owner.url()).hash.split('?')[1]).get('job')).toMatch(/^sjb_/);
      await expect.poll(() => owner.getByRole('heading', { name: /^Erasure sjb_/ }).evaluate((el) => el === document.activeElement)).toBe(true);
      // The job is in the address: a reload follows it on.
      await owner.reload();
      await expect.poll(() => owner.getByTestId('job-status').textContent(), { timeout: 30_000 }).toBe('done');
      const counts = owner.getByTestId('job-counts');
      expect(await counts.textContent()).toContain(`Events deleted${SUBJECT_EVENTS}`);
      expect(await counts.textContent()).toContain('Later events dropped for30 days');
      // The subject's next event is dropped, not stored.
      const again = await api(owners.base, 'POST', '/v1/events', key, { event: 'auth.login.success', actor_id: SUBJECT.actor, ip: DAY.homeIp });
      expect(again.json.status).toBe('dropped');
      expect(await counts.textContent()).not.toContain(SUBJECT.email);
      await expectAccessible(owner, 'privacy: erasure done');
    });

    it('shows none of the subject’s events in the events view afterwards; the other person’s remain', async () => {
      await owner.goto(`${owners.base}/dashboard#/events?q=${encodeURIComponent(`actor_id:${SUBJECT.actor}`)}`);
      await owner.getByText('No event matches this search.').waitFor();
      await owner.goto(`${owners.base}/dashboard#/events?q=${encodeURIComponent(`actor_id:${OTHER.actor}`)}`);
      await expect.poll(() => owner.getByRole('table', { name: 'Events' }).getByRole('link', { name: OTHER.actor }).count()).toBe(OTHER_EVENTS);
      expect((await api(owners.base, 'GET', `/v1/events?actor_id=${SUBJECT.actor}`, key)).json.data).toEqual([]);
    });

    it('saves minimisation and retention, shows the service’s refusals at their fields, and reads them back after a reload', async () => {
      await owner.goto(`${owners.base}/dashboard#/privacy`);
      await owner.getByLabel('IP addresses').selectOption('truncate');
      await owner.getByLabel('User agents').selectOption('drop');
      await owner.getByLabel(/Scrub secrets in metadata/).check();
      await owner.getByLabel(/^Metadata keys to scrub/).fill('internal_*\nbilling.iban');
      await owner.getByLabel(/^Metadata value patterns to scrub/).fill('EMP-[0-9]{6}\nsecret(?=x)');
      await owner.getByRole('button', { name: 'Save minimisation' }).click();
      const patterns = owner.getByLabel(/^Metadata value patterns to scrub/);
      await expect.poll(() => patterns.getAttribute('aria-invalid')).toBe('true');
      expect(await owner.locator('#problems-patterns').textContent()).toMatch(/^Line 2: privacy\.scrub\.patterns\.1: /);
      expect(await isFocused(owner, /^Metadata value patterns to scrub/)).toBe(true);
      await patterns.fill('EMP-[0-9]{6}');
      await owner.getByRole('button', { name: 'Save minimisation' }).click();
      await owner.getByText('Minimisation saved.').waitFor();

      const events = owner.getByLabel(/^Events, days/);
      await events.fill('400');
      await owner.getByRole('button', { name: 'Save retention' }).click();
      await expect.poll(() => events.getAttribute('aria-invalid')).toBe('true');
      expect(await owner.locator('#problems-retention-events').textContent()).toBe('retention.events_days is 400, more than the 90 days the pro plan keeps');
      expect(await isFocused(owner, /^Events, days/)).toBe(true);
      await events.fill('30');
      await owner.getByLabel(/^Alerts \(with their notes\), days/).fill('60');
      await owner.getByRole('button', { name: 'Save retention' }).click();
      await owner.getByText('Retention saved.').waitFor();
      await expect.poll(() => owner.getByText('In force: 30 days.').count()).toBe(1);

      await owner.reload();
      await owner.getByRole('button', { name: 'Save retention' }).waitFor();
      expect(await owner.getByLabel('IP addresses').inputValue()).toBe('truncate');
      expect(await owner.getByLabel('User agents').inputValue()).toBe('drop');
      expect(await owner.getByLabel(/^Metadata keys to scrub/).inputValue()).toBe('internal_*\nbilling.iban');
      expect(await owner.getByLabel(/^Events, days/).inputValue()).toBe('30');
      expect(await owner.getByText('Your plan keeps at most 90 days', { exact: false }).count()).toBe(1);
      const settings = (await api(owners.base, 'GET', '/v1/settings', key)).json;
      expect(settings.privacy).toEqual({
        ip: 'truncate',
        actor_id: 'keep',
        email: 'keep',
        device_id: 'keep',
        user_agent: 'drop',
        scrub: { builtin: true, keys: ['internal_*', 'billing.iban'], patterns: ['EMP-[0-9]{6}'] },
      });
      expect(settings.effective.retention).toEqual({ events: 30, alerts: 60, audit: 90 });
      await expectAccessible(owner, 'privacy: settings');
    });

    it('shows a viewer no search, export or erase control and read-only settings; the API refuses them', async () => {
      await viewer.goto(`${viewers.base}/dashboard#/privacy`);
      await viewer.getByText('Your role (viewer) does not search, export or erase data subjects; an admin or owner does.').waitFor();
      await viewer.getByText('Your role (viewer) reads these settings; an admin or owner changes them.').waitFor();
      for (const name of ['Search', 'Erase…', 'Download NDJSON', 'Erase permanently'])
        expect(await viewer.getByRole('button', { name, exact: true }).count()).toBe(0);
      // The owner's settings, shown and not changeable.
      await expect.poll(() => viewer.getByLabel('IP addresses').inputValue()).toBe('truncate');
      expect(await viewer.getByRole('button', { name: 'Save minimisation' }).isDisabled()).toBe(true);
      expect(await viewer.getByRole('button', { name: 'Save retention' }).isDisabled()).toBe(true);
      await expectAccessible(viewer, 'privacy: viewer');
      const identifiers = [{ kind: 'actor_id', value: OTHER.actor }];
      expect(await statusFromPage(viewer, 'POST', '/v1/subjects/erase', { identifiers })).toBe(403);
      expect(await statusFromPage(viewer, 'POST', '/v1/subjects/export', { identifiers })).toBe(403);
      expect(await statusFromPage(viewer, 'PATCH', '/v1/settings', { retention: { events_days: 1 } })).toBe(403);
      expect((await api(owners.base, 'GET', `/v1/events?actor_id=${OTHER.actor}`, key)).json.data).toHaveLength(OTHER_EVENTS);
      expect(await viewer.evaluate(() => document.title)).not.toBe('pwned');
      expect(await owner.evaluate(() => document.title)).not.toBe('pwned');
      expect(problems).toEqual([]);
    });
  });
}

describe.runIf(chromiumPresent())('privacy view', () => {
  privacyFlow('embedded', () => oneService('privacy', PSEUDONYMS));

  describePostgres('scale-out', () => {
    describeWithRedis('shared PostgreSQL schema + Redis prefix', redis, (r) => {
      privacyFlow('two processes on PostgreSQL and Redis', () => twoServicesSharing('privacy', r.prefix, PSEUDONYMS));
    });
  });
});
