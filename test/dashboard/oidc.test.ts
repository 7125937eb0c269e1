import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { ADMIN, api, provision, startService, tempDir, type Service } from '../process/service.js';
import { chromiumPresent, ensureDashboardBuilt, expectAccessible } from './harness.js';

const OWNER = { email: 'olivia@corp.example', password: 'owner passphrase 4 vigil' };

describe.skipIf(!chromiumPresent())('single sign-on in the browser', () => {
  let service: Service;
  let provider: TestProvider;
  let browser: Browser;
  let page: Page;
  let accountId: string;
  const problems: string[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    service = await startService(tempDir('vigil-oidc-'), { VIGIL_SSO_ALLOW_HTTP_LOOPBACK: 'on' });
    provider = await startProvider([`${service.base}/dashboard/api/oidc/callback`], {
      alice: { email: 'alice@corp.example', email_verified: true, groups: ['staff', 'secops-admins'] },
    });
    ({ accountId } = await provision(service.base, 'pro'));
    // The account's owner (invited by the operator) sets up the provider through the API.
    const invited = await api(service.base, 'POST', `/admin/accounts/${accountId}/invitations`, ADMIN, { email: OWNER.email, role: 'owner' });
    const token = /#\/accept\/([^?&#]+)/.exec(String(invited.json.link))?.[1] ?? '';
    const accepted = await fetch(`${service.base}/dashboard/api/invitations/${token}/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: OWNER.password }),
    });
    expect(accepted.status).toBe(201);
    const cookie = accepted.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const { csrf_token } = (await accepted.json()) as { csrf_token: string };
    const sso = await fetch(`${service.base}/v1/sso`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf_token },
      body: JSON.stringify({
        issuer: provider.issuer,
        client_id: provider.clientId,
        client_secret: provider.clientSecret,
        allowed_domains: ['corp.example'],
        role_claim: 'groups',
        role_map: { 'secops-admins': 'admin' },
        default_role: null,
      }),
    });
    expect(sso.status).toBe(200);
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(e.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await provider?.close();
    service?.child.kill('SIGTERM');
    await service?.exited;
  });

  it('signs in through the provider’s page and lands in the dashboard with the mapped role', async () => {
    await page.goto(`${service.base}/dashboard/#/sign-in?account=${accountId}`);
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).waitFor();
    await expectAccessible(page, 'sign-in with single sign-on');
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    // The provider's own sign-in page (oidc-provider's development form).
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    expect(new URL(page.url()).origin).toBe(service.base);
    const session = await page.evaluate(async () => (await fetch('/dashboard/api/session')).json());
    expect(session).toMatchObject({ role: 'admin', member: { email: 'alice@corp.example' }, account: { id: accountId } });
    // Admins see the Team view.
    expect(await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Team', exact: true }).count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it('comes back to the sign-in page with a message when the provider’s answer is refused', async () => {
    const context = await browser.newContext();
    const other = await context.newPage();
    await other.goto(`${service.base}/dashboard/api/oidc/callback?state=forged&code=forged`);
    await other.getByText('The single sign-on took too long or its link was used already; start again.').waitFor();
    expect(new URL(other.url()).hash).toBe('#/sign-in?error=sso_state');
    // A password sign-in from there opens the overview.
    await other.getByLabel('Email').fill(OWNER.email);
    await other.getByLabel('Password').fill(OWNER.password);
    await other.getByRole('button', { name: 'Sign in', exact: true }).click();
    await other.getByRole('navigation', { name: 'Sections' }).waitFor();
    expect(new URL(other.url()).hash).toBe('#/');
    expect(await other.getByRole('heading', { name: 'Not found' }).count()).toBe(0);
    await context.close();
  });
});
