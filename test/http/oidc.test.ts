import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../src/util/duration.js';
import { AuditTrail, CLI_OPERATOR } from '../../src/audit/trail.js';
import { SIGN_IN_PER_ADDRESS_PER_MINUTE } from '../../src/dashboard/sign-in.js';
import { Members } from '../../src/team/members.js';
import { newId } from '../../src/util/ids.js';
import { bearer, testApp, type TestApp } from '../helpers/app.js';
import { signInAtProvider, startProvider, type ProviderPerson, type TestProvider } from '../helpers/oidc-provider.js';

const PUBLIC_URL = 'http://vigil.test';
const CALLBACK = `${PUBLIC_URL}/dashboard/api/oidc/callback`;
const PASSWORD = 'correct horse battery staple 7';

const PEOPLE: Record<string, ProviderPerson> = {
  alice: { email: 'alice@corp.example', email_verified: true, groups: ['staff', 'secops-admins'] },
  bob: { email: 'bob@corp.example', email_verified: true, groups: ['marketing'] },
  carol: { email: 'carol@elsewhere.example', email_verified: true, groups: ['secops-admins'] },
  dave: { email: 'dave@corp.example', email_verified: false, groups: ['secops-admins'] },
  erin: { email: 'erin@corp.example', email_verified: true, groups: ['secops'] },
};

describe('single sign-on with OpenID Connect', () => {
  let t: TestApp;
  let provider: TestProvider;
  /** The account the instance's single sign-on (VIGIL_OIDC_*) signs people in to. */
  const instanceAccount = newId('acc');
  /** An account with single sign-on of its own, set up by its admin through the API. */
  let accountId: string;
  let secret: string;
  let admin: { cookie: string; csrf: string };
  const logLines: string[] = [];

  const sessionOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).match(/vigil_session=[^;]+/)?.[0];

  beforeAll(async () => {
    provider = await startProvider([CALLBACK], PEOPLE);
    t = await testApp(
      {
        VIGIL_IP_LIMITS: '127.0.0.0/8=100000000',
        VIGIL_PUBLIC_URL: PUBLIC_URL,
        VIGIL_SSO_ALLOW_HTTP_LOOPBACK: 'on',
        VIGIL_OIDC_ISSUER: provider.issuer,
        VIGIL_OIDC_CLIENT_ID: provider.clientId,
        VIGIL_OIDC_CLIENT_SECRET: provider.clientSecret,
        VIGIL_OIDC_ACCOUNT: instanceAccount,
        VIGIL_OIDC_ROLE_CLAIM: 'groups',
        VIGIL_OIDC_ROLE_MAP: 'secops=analyst',
        VIGIL_OIDC_DEFAULT_ROLE: 'viewer',
      },
      { logger: pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) }) },
    );
    await t.services.store.accounts.createAccount({ id: instanceAccount, name: 'instance', plan: 'pro', createdAt: t.clock.now() });
    ({ id: accountId, secret } = await t.account('pro'));
    const members = new Members(t.services.store, new AuditTrail(t.services.store.audit, t.clock), t.clock);
    expect(
      (await members.add({ accountId, actor: CLI_OPERATOR, ip: null, userAgent: null }, { email: 'admin@corp.example', role: 'admin', password: PASSWORD })).ok,
    ).toBe(true);
    const res = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/sign-in', payload: { email: 'admin@corp.example', password: PASSWORD } });
    admin = { cookie: sessionOf(res) ?? '', csrf: res.json<{ csrf_token: string }>().csrf_token };
  });
  // Start and callback each count against the per-address sign-in limit: every test starts a new minute.
  beforeEach(() => t.clock.advance(MINUTE_MS));
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  const putSso = (body: Record<string, unknown>, headers: Record<string, string> = { cookie: admin.cookie, 'x-csrf-token': admin.csrf }) =>
    t.vigil.app.inject({ method: 'PUT', url: '/v1/sso', headers, payload: body });

  const settings = (extra: Record<string, unknown> = {}) => ({
    issuer: provider.issuer,
    client_id: provider.clientId,
    client_secret: provider.clientSecret,
    allowed_domains: ['Corp.example'],
    role_claim: 'groups',
    role_map: { 'secops-admins': 'admin', secops: 'analyst' },
    default_role: null,
    ...extra,
  });

  /** Starts at the service, signs in at the provider as `login`; the callback URL (path and query) and the binding cookie. */
  async function throughProvider(login: string, account?: string, tamper: (authorizationUrl: URL) => void = () => undefined) {
    const start = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/oidc/start', payload: account ? { account_id: account } : {} });
    expect(start.statusCode).toBe(200);
    const binding = String(start.headers['set-cookie']).match(/vigil_oidc=[^;]+/)?.[0] ?? '';
    expect(String(start.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Lax; Max-Age=600/);
    const authorization = new URL(start.json<{ redirect: string }>().redirect);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('redirect_uri')).toBe(CALLBACK);
    tamper(authorization);
    const back = await signInAtProvider(authorization.href, login);
    expect(back.origin + back.pathname).toBe(CALLBACK);
    return { callback: back.pathname + back.search, binding };
  }

  const callback = (url: string, cookie: string) => t.vigil.app.inject({ method: 'GET', url, headers: { cookie } });

  async function signInAs(login: string, account?: string) {
    const { callback: url, binding } = await throughProvider(login, account);
    return callback(url, binding);
  }

  const failedReasons = async (account: string) =>
    (await t.services.store.audit.list(account, { action: 'sign_in.failed' }, 50)).items.map((e) => [e.actor.label, e.details.reason]);

  it('lets an admin set up the account’s provider; the secret is never shown or recorded, and keys may not', async () => {
    expect((await putSso(settings(), bearer(secret))).statusCode).toBe(403);
    const bad = await putSso(settings({ issuer: 'ftp://login.example.com', allowed_domains: ['not a domain'], role_claim: null }));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.map((d: { field: string }) => d.field)).toEqual(['issuer', 'allowed_domains', 'role_claim']);
    const long = await putSso(settings({ client_id: 'x'.repeat(300) }));
    expect(long.statusCode).toBe(400);
    const owner = await putSso(settings({ default_role: 'owner' }));
    expect(owner.statusCode).toBe(400);

    const put = await putSso(settings());
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ issuer: provider.issuer, allowed_domains: ['corp.example'], client_secret_set: true, redirect_uri: CALLBACK });
    const got = await t.vigil.app.inject({ method: 'GET', url: '/v1/sso', headers: { cookie: admin.cookie } });
    expect(got.json()).toEqual(put.json());
    expect(got.body).not.toContain(provider.clientSecret);
    // A change that leaves the secret out keeps it.
    expect((await putSso(settings({ client_secret: undefined, default_role: 'viewer' }))).statusCode).toBe(200);
    expect((await putSso(settings())).statusCode).toBe(200);
    const entries = await t.services.store.audit.list(accountId, { action: 'sso.configured' }, 10);
    expect(entries.items).toHaveLength(3);
    expect(entries.items.at(-1)?.changes).toMatchObject({ issuer: { before: null, after: provider.issuer }, client_secret: { after: '[changed]' } });
    expect(JSON.stringify(entries.items)).not.toContain(provider.clientSecret);
  });

  it('signs a person in with the role their groups map to, creating them without a password', async () => {
    const options = await t.vigil.app.inject({ method: 'GET', url: `/dashboard/api/sign-in?account=${accountId}` });
    expect(options.json()).toMatchObject({ sso: true });
    const res = await signInAs('alice', accountId);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard/');
    const cookie = sessionOf(res);
    expect(cookie).toBeDefined();
    const session = await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: cookie ?? '' } });
    expect(session.json()).toMatchObject({ role: 'admin', member: { email: 'alice@corp.example', role: 'admin' }, account: { id: accountId } });
    const user = await t.services.store.members.findUserByEmail('alice@corp.example');
    expect(user?.passwordHash).toBeNull();
    const [signedIn] = (await t.services.store.audit.list(accountId, { action: 'sign_in.succeeded' }, 1)).items;
    expect(signedIn).toMatchObject({ actor: { label: 'alice@corp.example' }, details: { method: 'oidc' } });
  });

  it('refuses a replayed state, and a callback from a browser that did not start the sign-in', async () => {
    const { callback: url, binding } = await throughProvider('erin', accountId);
    const elsewhere = await callback(url, '');
    expect(elsewhere.headers.location).toBe('/dashboard/#/sign-in?error=sso_state');
    const first = await callback(url, binding);
    expect(first.headers.location).toBe('/dashboard/');
    const replay = await callback(url, binding);
    expect(replay.statusCode).toBe(303);
    expect(replay.headers.location).toBe('/dashboard/#/sign-in?error=sso_state');
    expect(sessionOf(replay)).toBeUndefined();
    expect(await failedReasons(accountId)).toEqual(expect.arrayContaining([[null, 'sso_state']]));
    // The log shows the callback without its code and state.
    const log = logLines.join('\n');
    expect(log).toContain('/dashboard/api/oidc/callback?code=[token]');
    expect(log).not.toContain(new URLSearchParams(url.split('?')[1]).get('state'));
    expect(log).not.toContain(provider.clientSecret);
  });

  it('refuses an unmapped group without a default role, a domain not allowed and an unverified email', async () => {
    const bob = await signInAs('bob', accountId);
    expect(bob.headers.location).toBe('/dashboard/#/sign-in?error=sso_role');
    const carol = await signInAs('carol', accountId);
    expect(carol.headers.location).toBe('/dashboard/#/sign-in?error=sso_domain');
    const dave = await signInAs('dave', accountId);
    expect(dave.headers.location).toBe('/dashboard/#/sign-in?error=sso_email_unverified');
    expect(await failedReasons(accountId)).toEqual(
      expect.arrayContaining([
        ['bob@corp.example', 'sso_role'],
        ['carol@elsewhere.example', 'sso_domain'],
        ['dave@corp.example', 'sso_email_unverified'],
      ]),
    );
    expect(await t.services.store.members.findUserByEmail('bob@corp.example')).toBeUndefined();
  });

  it('refuses an ID token with another nonce and an answer naming another issuer', async () => {
    const nonce = await throughProvider('alice', accountId, (url) => url.searchParams.set('nonce', 'a-nonce-vigil-never-made'));
    const wrongNonce = await callback(nonce.callback, nonce.binding);
    expect(wrongNonce.headers.location).toBe('/dashboard/#/sign-in?error=sso_provider');
    const issuer = await throughProvider('alice', accountId);
    const forged = issuer.callback.replace(/iss=[^&]+/, `iss=${encodeURIComponent('https://evil.example')}`);
    expect(forged).not.toBe(issuer.callback);
    const wrongIssuer = await callback(forged, issuer.binding);
    expect(wrongIssuer.headers.location).toBe('/dashboard/#/sign-in?error=sso_provider');
  });

  it('signs in through the instance’s provider with its default role, and updates the role at each sign-in', async () => {
    const options = await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/sign-in' });
    expect(options.json()).toEqual({ password: true, key_sign_in: false, sso: true });
    const bob = await signInAs('bob');
    expect(bob.headers.location).toBe('/dashboard/');
    const erin = await signInAs('erin');
    const session = await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: sessionOf(erin) ?? '' } });
    expect(session.json()).toMatchObject({ role: 'analyst', account: { id: instanceAccount } });
    const bobUser = await t.services.store.members.findUserByEmail('bob@corp.example');
    expect((await t.services.store.members.getMember(instanceAccount, bobUser?.id ?? ''))?.role).toBe('viewer');

    // Promoted in Vigil, the person gets the provider's role back at their next sign-in.
    await t.services.store.members.setMemberRole(instanceAccount, bobUser?.id ?? '', 'admin');
    await signInAs('bob');
    expect((await t.services.store.members.getMember(instanceAccount, bobUser?.id ?? ''))?.role).toBe('viewer');
    const changed = await t.services.store.audit.list(instanceAccount, { action: 'member.role_changed' }, 5);
    expect(changed.items[0]?.changes).toEqual({ role: { before: 'admin', after: 'viewer' } });
  });

  it('counts start and callback against the per-address sign-in limit', async () => {
    const answers: number[] = [];
    for (let i = 0; i <= SIGN_IN_PER_ADDRESS_PER_MINUTE; i++)
      answers.push((await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/oidc/start', payload: {}, remoteAddress: '127.0.2.1' })).statusCode);
    expect(answers.slice(0, SIGN_IN_PER_ADDRESS_PER_MINUTE).every((s) => s === 200)).toBe(true);
    expect(answers.at(-1)).toBe(429);
    const back = await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/oidc/callback?state=x&code=y', remoteAddress: '127.0.2.1' });
    expect(back.headers.location).toBe('/dashboard/#/sign-in?error=rate_limited');
  });

  it('never lets an account’s provider reach a private address, and cuts off an oversized provider answer', async () => {
    const start = () => t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/oidc/start', payload: { account_id: accountId } });
    const warnings = () => logLines.filter((line) => line.includes('could not be reached')).join('\n');
    expect((await putSso(settings({ issuer: 'https://10.1.2.3' }))).statusCode).toBe(200);
    expect((await start()).statusCode).toBe(503);
    expect(warnings()).toContain('10.1.2.3 is a private address');

    // Loopback is allowed here (VIGIL_SSO_ALLOW_HTTP_LOOPBACK): a provider on it answers a discovery document of 1 MB.
    const huge = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ issuer: 'x', padding: 'x'.repeat(1024 * 1024) }));
    });
    await new Promise<void>((resolve) => huge.listen(0, '127.0.0.1', resolve));
    try {
      const issuer = `http://127.0.0.1:${(huge.address() as AddressInfo).port}`;
      expect((await putSso(settings({ issuer }))).statusCode).toBe(200);
      expect((await start()).statusCode).toBe(503);
      expect(warnings()).toMatch(/answer from http:\/\/127\.0\.0\.1:\d+ exceeds 262144 bytes/);
    } finally {
      huge.close();
    }
    expect((await putSso(settings())).statusCode).toBe(200);
    expect((await start()).statusCode).toBe(200);
  });

  it('turns the account’s single sign-on off', async () => {
    const removed = await t.vigil.app.inject({ method: 'DELETE', url: '/v1/sso', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf } });
    expect(removed.statusCode).toBe(204);
    const start = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/oidc/start', payload: { account_id: accountId } });
    expect(start.statusCode).toBe(404);
    const entries = await t.services.store.audit.list(accountId, { action: 'sso.removed' }, 5);
    expect(entries.items).toHaveLength(1);
    expect(JSON.stringify(entries.items)).not.toContain(provider.clientSecret);
  });
});
