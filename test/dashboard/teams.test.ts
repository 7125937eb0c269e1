// Callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, TOTP_STEP_SECONDS, totpCode } from '../../src/team/totp.js';
import { launchChromium } from '../helpers/chromium.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { ADMIN, api, provision, type Service } from '../process/service.js';
import { describePostgres } from '../storage/pg-helpers.js';
import {
  ATTACKER_IP,
  chromiumPresent,
  ensureDashboardBuilt,
  expectAccessible,
  oneService,
  sendAttack,
  type Topology,
  twoServicesSharing,
  VICTIM,
} from './harness.js';

const OWNER = { email: 'olivia@example.com', password: 'owner passphrase 4 vigil' };
const VIEWER = { email: 'victor@example.com', password: 'viewer passphrase 4 vigil' };

const redis = await connectTestRedis('dashboard-teams');

/** The single-use token of an invitation link, wherever the link points. */
const tokenOf = (link: string): string => {
  const token = /#\/accept\/([^?&#]+)/.exec(link)?.[1];
  if (token === undefined) throw new Error(`not an invitation link: ${link}`);
  return token;
};

/**
 * A code of the next time step: the step whose code enrolment used is refused, and the service
 * accepts one step of drift, so the next step's code is good at once.
 */
const nextStepCode = (secret: string): string => codeNow(secret, TOTP_STEP_SECONDS * 1000);

function codeNow(secret: string, aheadMs = 0): string {
  const key = base32Decode(secret);
  if (key === undefined) throw new Error(`not a base32 secret: ${secret}`);
  return totpCode(key, Date.now() + aheadMs);
}

const section = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

/** What the page's own session may call: the status of a PATCH the form would send, with the page's CSRF token. */
function patchFromPage(page: Page, path: string, body: object): Promise<{ status: number; message: string }> {
  return page.evaluate(
    async ({ path, body }) => {
      const session = (await (await fetch('/dashboard/api/session')).json()) as { csrf_token: string };
      const res = await fetch(path, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
        body: JSON.stringify(body),
      });
      return { status: res.status, message: String(((await res.json()) as { message?: string }).message) };
    },
    { path, body },
  );
}

/**
 * The team flow on one deployment: `owners` is where the owner works, `viewers` where the viewer
 * does (two processes sharing PostgreSQL and Redis in scale-out mode, so a revocation made on one
 * instance must be refused on the other at once).
 */
function teamFlow(mode: string, open: () => Promise<Topology>) {
  describe(`teams in headless Chromium (${mode})`, () => {
    let owners: Service;
    let viewers: Service;
    let close: () => Promise<void>;
    let browser: Browser;
    let ownerContext: BrowserContext;
    let viewerContext: BrowserContext;
    let owner: Page;
    let viewer: Page;
    let key: string;
    let alertId: string;
    let totpSecret = '';
    let ownerToken = '';
    const problems: string[] = [];

    beforeAll(async () => {
      ensureDashboardBuilt();
      ({ owners, viewers, close } = await open());
      browser = await launchChromium();
      ownerContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      viewerContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      owner = await ownerContext.newPage();
      viewer = await viewerContext.newPage();
      for (const page of [owner, viewer]) page.on('pageerror', (e) => problems.push(e.message));
      const account = await provision(owners.base, 'pro');
      key = account.key;
      await sendAttack(owners.base, key);
      const alerts = await api(owners.base, 'GET', '/v1/alerts?limit=1', key);
      alertId = alerts.json.data[0].id;
      // The operator invites the first person: no one signs in with the key.
      const invited = await api(owners.base, 'POST', `/admin/accounts/${account.accountId}/invitations`, ADMIN, { email: OWNER.email, role: 'owner' });
      expect(invited.status, JSON.stringify(invited.json)).toBe(201);
      ownerToken = tokenOf(invited.json.link);
      await owner.goto(`${owners.base}/dashboard#/accept/${ownerToken}`);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await close?.();
    }, 60_000);

    it('the invited owner accepts the link, chooses a password and lands in the dashboard', async () => {
      await owner.getByRole('heading', { name: 'Join Vigil' }).waitFor();
      await expectAccessible(owner, 'invitation');
      await owner.getByLabel('Your name').fill('Olivia');
      await owner.getByLabel(/Choose a password/).fill(OWNER.password);
      await owner.getByRole('button', { name: 'Accept the invitation' }).click();
      await section(owner, 'Team').waitFor();
      expect(await owner.getByRole('link', { name: OWNER.email }).count()).toBe(1);
      // The link works once.
      const again = await fetch(`${owners.base}/dashboard/api/invitations/${ownerToken}`);
      expect(again.status).toBe(404);
    });

    it('the owner invites a viewer from the Team view and the viewer accepts on another instance', async () => {
      await section(owner, 'Team').click();
      await owner.getByLabel('Their email').fill(VIEWER.email);
      await owner.getByLabel('Role', { exact: true }).selectOption('viewer');
      await owner.getByRole('button', { name: 'Invite' }).click();
      const link = owner.getByLabel('Invitation link');
      await link.waitFor();
      await expectAccessible(owner, 'team');
      await viewer.goto(`${viewers.base}/dashboard#/accept/${tokenOf(await link.inputValue())}`);
      await viewer.getByLabel('Your name').fill('Victor');
      await viewer.getByLabel(/Choose a password/).fill(VIEWER.password);
      await viewer.getByRole('button', { name: 'Accept the invitation' }).click();
      await section(viewer, 'Overview').waitFor();
      // A viewer manages no one: no Team section.
      expect(await section(viewer, 'Team').count()).toBe(0);
    });

    it('the viewer turns on an authenticator and then signs in with password and code', async () => {
      await viewer.getByRole('link', { name: VIEWER.email }).click();
      await viewer.getByRole('button', { name: 'Set up an authenticator app' }).click();
      totpSecret = (await viewer.getByTestId('totp-secret').textContent()) ?? '';
      expect(totpSecret).toMatch(/^[A-Z2-7]{16,}$/);
      await viewer.getByLabel('Code from the app').fill(codeNow(totpSecret));
      await viewer.getByRole('button', { name: 'Turn on' }).click();
      await expect.poll(() => viewer.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);
      await expectAccessible(viewer, 'account');
      await viewer.getByRole('button', { name: 'Sign out' }).click();
      await viewer.getByLabel('Email').fill(VIEWER.email);
      await viewer.getByLabel('Password').fill(VIEWER.password);
      await viewer.getByRole('button', { name: 'Sign in', exact: true }).click();
      const code = viewer.getByLabel('Authentication code');
      await code.waitFor();
      // The password alone opened no session.
      expect((await viewerContext.cookies()).some((c) => c.name === 'vigil_session')).toBe(false);
      await code.fill(nextStepCode(totpSecret));
      await viewer.getByRole('button', { name: 'Verify' }).click();
      await section(viewer, 'Overview').waitFor();
    }, 60_000);

    it('shows the viewer the alert without "Save status", and the API refuses the change with 403', async () => {
      await viewer.goto(`${viewers.base}/dashboard#/alerts/${alertId}`);
      await viewer.getByTestId('alert-status').waitFor();
      expect(await viewer.getByRole('button', { name: 'Save status' }).count()).toBe(0);
      expect(await viewer.getByRole('button', { name: 'Assign to me' }).count()).toBe(0);
      // Nor the forms of settings and threat models.
      await viewer.goto(`${viewers.base}/dashboard#/settings`);
      await viewer.getByText('Your role (viewer) reads these settings; an analyst or above changes them.').waitFor();
      expect(await viewer.getByRole('button', { name: 'Save thresholds' }).isDisabled()).toBe(true);
      await viewer.goto(`${viewers.base}/dashboard#/threat-models`);
      await viewer.getByRole('heading', { name: 'Threat models' }).waitFor();
      expect(await viewer.getByRole('link', { name: 'New model' }).count()).toBe(0);
      const refused = await patchFromPage(viewer, `/v1/alerts/${alertId}`, { status: 'resolved' });
      expect(refused).toEqual({ status: 403, message: 'Your role (viewer) cannot do this; it needs analyst or above.' });
      // The keys view, reached by its address: no key list, no create or revoke controls; the API refuses.
      await viewer.goto(`${viewers.base}/dashboard#/keys`);
      await viewer.getByText('Your role (viewer) does not manage API keys; an admin does.').waitFor();
      expect(await viewer.getByRole('button', { name: 'Create key' }).count()).toBe(0);
      expect(await viewer.getByRole('button', { name: /Revoke/ }).count()).toBe(0);
      expect((await patchFromPage(viewer, '/v1/keys/key_none', { name: 'x' })).status).toBe(403);
      // The owner's session may: the status form is there and saves.
      await owner.goto(`${owners.base}/dashboard#/alerts/${alertId}`);
      await owner.getByRole('radio', { name: 'Resolved' }).check();
      await owner.getByRole('button', { name: 'Save status' }).click();
      await expect.poll(() => owner.getByTestId('alert-status').textContent()).toBe('Resolved');
    });

    it('lists who changed what in the audit trail', async () => {
      await section(owner, 'Audit trail').click();
      const trail = owner.getByRole('table', { name: 'Audit trail, newest first' });
      await expect.poll(() => trail.getByText('alert.status_changed').count()).toBe(1);
      expect(await trail.getByText('member.invited').count()).toBeGreaterThanOrEqual(2);
      expect(await trail.getByText('totp.enabled').count()).toBe(1);
      await expectAccessible(owner, 'audit trail');
    });

    it('refuses a session the owner revoked at once, on the other instance too', async () => {
      await section(owner, 'Team').click();
      const row = owner.getByRole('row').filter({ hasText: VIEWER.email });
      await row.getByRole('link', { name: 'Sessions' }).click();
      const sessions = owner.getByRole('table', { name: 'Live sessions' });
      await sessions.waitFor();
      const revoke = sessions.getByRole('button', { name: /Revoke/ });
      const live = await revoke.count();
      expect(live).toBeGreaterThanOrEqual(1);
      for (let i = 0; i < live; i++) await revoke.first().click();
      await expect.poll(() => owner.getByText('No live session.').count()).toBe(1);
      // The viewer's very next request is refused: the page goes back to the sign-in.
      await viewer.goto(`${viewers.base}/dashboard#/alerts`);
      await viewer.getByLabel('Password').waitFor();
      expect(await section(viewer, 'Alerts').count()).toBe(0);
      expect(problems).toEqual([]);
    });

    it('never shows the attacker address to a signed-out browser', async () => {
      const res = await viewer.evaluate(async () => (await fetch('/v1/events?limit=5')).status);
      expect(res).toBe(401);
      expect(await viewer.content()).not.toContain(ATTACKER_IP);
      expect(await viewer.content()).not.toContain(VICTIM);
    });
  });
}

describe.runIf(chromiumPresent())('teams', () => {
  teamFlow('embedded', () => oneService('teams'));

  describePostgres('scale-out', () => {
    describeWithRedis('shared PostgreSQL schema + Redis prefix', redis, (r) => {
      teamFlow('two processes on PostgreSQL and Redis', () => twoServicesSharing('teams', r.prefix));
    });
  });
});
