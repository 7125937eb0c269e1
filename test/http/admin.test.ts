import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_FAILURE_LIMITS } from '../../src/http/guards.js';
import { ADMIN_TOKEN, bearer, testApp, type TestApp } from '../helpers/app.js';
import { expectError, postEvent, roomyApp } from './support.js';

const admin = bearer(ADMIN_TOKEN);

describe('admin API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await roomyApp();
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = admin) =>
    t.vigil.app.inject({ method, url, headers, payload });

  async function createAccount(plan: string) {
    const res = await call('POST', '/admin/accounts', { name: `Acme ${plan}`, plan });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; name: string; plan: string };
  }

  async function createKey(accountId: string, kind: 'secret' | 'publishable', allowed_origins?: string[]) {
    const res = await call('POST', `/admin/accounts/${accountId}/keys`, { kind, ...(allowed_origins ? { allowed_origins } : {}) });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; key: string; kind: string };
  }

  it('creates an account', async () => {
    const created = await createAccount('starter');
    expect(created).toMatchObject({ name: 'Acme starter', plan: 'starter' });
    expect(created.id).toMatch(/^acc_/);
    const list = (await call('GET', '/admin/accounts')).json().data;
    expect(list.map((a: { id: string }) => a.id)).toContain(created.id);
  });

  it('creates keys shown once, never in the list', async () => {
    const acct = await createAccount('pro');
    const secret = await createKey(acct.id, 'secret');
    const publishable = await createKey(acct.id, 'publishable', ['https://shop.example']);
    expect(secret.key).toMatch(/^vgl_sk_[0-9A-Za-z]{32}$/);
    expect(publishable.key).toMatch(/^vgl_pk_[0-9A-Za-z]{32}$/);
    expect(secret.id).toMatch(/^key_/);
    const listRes = await call('GET', `/admin/accounts/${acct.id}/keys`);
    expect(listRes.statusCode).toBe(200);
    expect(listRes.body).not.toContain(secret.key);
    expect(listRes.body).not.toContain(publishable.key);
    expect(listRes.body).not.toContain(secret.key.slice(12));
    const keys = listRes.json().data;
    expect(keys).toHaveLength(2);
    expect(keys.find((k: { id: string }) => k.id === publishable.id)).toMatchObject({
      kind: 'publishable',
      allowed_origins: ['https://shop.example'],
      revoked_at: null,
    });
    for (const k of keys) expect(k).not.toHaveProperty('key');
    // The key works at once.
    expect((await postEvent(t, secret.key, { event: 'auth.login' })).statusCode).toBe(202);
  });

  it('a plan change applies at once: free -> pro opens the batch endpoint, pro -> free closes it', async () => {
    const acct = await createAccount('free');
    const { key } = await createKey(acct.id, 'secret');
    const batch = { events: [{ event: 'auth.login' }, { event: 'auth.logout' }] };
    expectError(await postEvent(t, key, batch, '/v1/events/batch'), 403, 'PLAN_UPGRADE_REQUIRED');
    const patched = await call('PATCH', `/admin/accounts/${acct.id}`, { plan: 'pro' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ id: acct.id, plan: 'pro' });
    const ok = await postEvent(t, key, batch, '/v1/events/batch');
    expect(ok.statusCode).toBe(202);
    expect(ok.json().accepted).toBe(2);
    expect(ok.headers['x-ratelimit-limit']).not.toBe('30');
    await call('PATCH', `/admin/accounts/${acct.id}`, { plan: 'free' });
    expectError(await postEvent(t, key, batch, '/v1/events/batch'), 403, 'PLAN_UPGRADE_REQUIRED');
  });

  it('a plan change is reflected in the batch size at once (starter 50 -> business 100)', async () => {
    const acct = await createAccount('starter');
    const { key } = await createKey(acct.id, 'secret');
    const batch = { events: Array.from({ length: 80 }, () => ({ event: 'custom.x.y' })) };
    expectError(await postEvent(t, key, batch, '/v1/events/batch'), 400, 'BATCH_TOO_LARGE');
    await call('PATCH', `/admin/accounts/${acct.id}`, { plan: 'business' });
    expect((await postEvent(t, key, batch, '/v1/events/batch')).statusCode).toBe(202);
  });

  it('revoking a key answers 401 from then on; the other keys keep working', async () => {
    const acct = await createAccount('pro');
    const a = await createKey(acct.id, 'secret');
    const b = await createKey(acct.id, 'secret');
    expect((await postEvent(t, a.key, { event: 'auth.login' })).statusCode).toBe(202);
    const del = await call('DELETE', `/admin/keys/${a.id}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expectError(await postEvent(t, a.key, { event: 'auth.login' }), 401, 'UNAUTHORIZED');
    expect((await postEvent(t, b.key, { event: 'auth.login' })).statusCode).toBe(202);
    const keys = (await call('GET', `/admin/accounts/${acct.id}/keys`)).json().data;
    expect(keys.find((k: { id: string }) => k.id === a.id).revoked_at).toEqual(new Date(t.clock.now()).toISOString());
  });

  it('unknown records and bad bodies', async () => {
    expectError(await call('PATCH', '/admin/accounts/acc_nope', { plan: 'pro' }), 404, 'NOT_FOUND');
    expectError(await call('POST', '/admin/accounts/acc_nope/keys', { kind: 'secret' }), 404, 'NOT_FOUND');
    expectError(await call('DELETE', '/admin/keys/key_nope'), 404, 'NOT_FOUND');
    expect((await call('POST', '/admin/accounts', { name: 'x', plan: 'platinum' })).statusCode).toBe(400);
    expect((await call('POST', '/admin/accounts', { name: 'x' })).statusCode).toBe(400);
    expect((await call('POST', '/admin/accounts', { name: 'x', plan: 'pro', extra: 1 })).statusCode).toBe(400);
    const acct = await createAccount('pro');
    expect((await call('POST', `/admin/accounts/${acct.id}/keys`, { kind: 'root' })).statusCode).toBe(400);
    expect((await call('POST', `/admin/accounts/${acct.id}/keys`, { kind: 'publishable', allowed_origins: ['not a url'] })).statusCode).toBe(400);
    expect((await call('PATCH', `/admin/accounts/${acct.id}`, { plan: 'platinum' })).statusCode).toBe(400);
    for (const res of [await call('POST', '/admin/accounts', { name: 'x', plan: 'platinum' })]) expectError(res, 400, res.json().error);
  });

  it.each([
    ['missing token', {}],
    ['wrong token', bearer('wrong-token-0123456789')],
    ['an API key instead', bearer('vgl_sk_' + 'A'.repeat(32))],
    ['the right token as X-API-Key (only Authorization: Bearer is accepted)', { 'x-api-key': ADMIN_TOKEN }],
  ])('%s: 401', async (_name, headers) => {
    // Each case starts past the failed-authentication window of the one before.
    t.clock.advance(61_000);
    expectError(await call('GET', '/admin/accounts', undefined, headers), 401, 'UNAUTHORIZED');
    expectError(await call('POST', '/admin/accounts', { name: 'x', plan: 'pro' }, headers), 401, 'UNAUTHORIZED');
    expectError(await call('DELETE', '/admin/keys/key_x', undefined, headers), 401, 'UNAUTHORIZED');
  });

  it("PATCH /admin/keys/{id} replaces a publishable key's origins: the browser and its preflight are admitted at once", async () => {
    const acct = await createAccount('pro');
    const { id, key } = await createKey(acct.id, 'publishable');
    const origin = 'https://app.example.com';
    const fromBrowser = () => postEvent(t, key, { event: 'auth.login' }, '/v1/events', { origin });
    const preflight = () => t.vigil.app.inject({ method: 'OPTIONS', url: '/v1/events', headers: { origin, 'access-control-request-method': 'POST' } });
    expectError(await fromBrowser(), 403, 'FORBIDDEN');
    expect((await preflight()).headers['access-control-allow-origin']).toBeUndefined();

    const patched = await call('PATCH', `/admin/keys/${id}`, { allowed_origins: [origin, 'https://www.example.com'] });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ id, kind: 'publishable', allowed_origins: [origin, 'https://www.example.com'], revoked_at: null });
    expect(patched.body).not.toContain(key);
    const ok = await fromBrowser();
    expect(ok.statusCode).toBe(202);
    expect(ok.headers['access-control-allow-origin']).toBe(origin);
    expect((await preflight()).headers['access-control-allow-origin']).toBe(origin);
    const listed = (await call('GET', `/admin/accounts/${acct.id}/keys`)).json().data as { id: string; allowed_origins: string[] }[];
    expect(listed.find((k) => k.id === id)?.allowed_origins).toEqual([origin, 'https://www.example.com']);

    expect((await call('PATCH', `/admin/keys/${id}`, { allowed_origins: [] })).json().allowed_origins).toEqual([]);
    expectError(await fromBrowser(), 403, 'FORBIDDEN');
  });

  it('PATCH /admin/keys/{id} refuses what is not an origin, a secret key and an unknown key', async () => {
    const acct = await createAccount('pro');
    const publishable = await createKey(acct.id, 'publishable', ['https://shop.example']);
    const secret = await createKey(acct.id, 'secret');
    const refused = async (id: string, body: object, status: number, code: string, says: string) => {
      const res = await call('PATCH', `/admin/keys/${id}`, body);
      const answer = expectError(res, status, code);
      expect(`${String(answer.message)} ${JSON.stringify(answer.details ?? [])}`).toContain(says);
    };
    await refused(publishable.id, { allowed_origins: ['https://Shop.example'] }, 400, 'INVALID_REQUEST', 'Did you mean "https://shop.example"?');
    await refused(publishable.id, { allowed_origins: ['https://shop.example:443'] }, 400, 'INVALID_REQUEST', 'Did you mean "https://shop.example"?');
    await refused(publishable.id, { allowed_origins: ['shop.example'] }, 400, 'INVALID_REQUEST', 'allowed_origins');
    await refused(publishable.id, {}, 400, 'INVALID_REQUEST', 'allowed_origins');
    await refused(secret.id, { allowed_origins: ['https://shop.example'] }, 400, 'INVALID_REQUEST', 'publishable keys only');
    await refused('key_missing', { allowed_origins: ['https://shop.example'] }, 404, 'NOT_FOUND', 'key_missing');
    const listed = (await call('GET', `/admin/accounts/${acct.id}/keys`)).json().data as { id: string; allowed_origins: string[] }[];
    expect(listed.map((k) => k.allowed_origins)).toEqual([['https://shop.example'], []]);
  });

  it('an API key (even a secret one) cannot use the admin API', async () => {
    t.clock.advance(61_000);
    const acct = await t.account('business');
    expectError(await call('GET', '/admin/accounts', undefined, bearer(acct.secret)), 401, 'UNAUTHORIZED');
  });
});

describe('admin API without VIGIL_ADMIN_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ VIGIL_ADMIN_TOKEN: '' });
  });
  afterAll(() => t.close());

  it.each([
    ['GET', '/admin/accounts'],
    ['POST', '/admin/accounts'],
    ['PATCH', '/admin/accounts/acc_x'],
    ['POST', '/admin/accounts/acc_x/keys'],
    ['DELETE', '/admin/keys/key_x'],
    ['PATCH', '/admin/keys/key_x'],
  ] as const)('%s %s is 404', async (method, url) => {
    for (const headers of [{}, bearer(ADMIN_TOKEN), bearer('')]) {
      const res = await t.vigil.app.inject({ method, url, headers, payload: method === 'POST' || method === 'PATCH' ? { name: 'x', plan: 'pro' } : undefined });
      expectError(res, 404, 'NOT_FOUND');
    }
    expect(await t.services.store.accounts.countAccounts()).toBe(0);
  });
});

describe('admin API throttle: per source, never in the way of the right token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  const admin = (token: string, remoteAddress: string) => t.vigil.app.inject({ method: 'GET', url: '/admin/accounts', headers: bearer(token), remoteAddress });
  const wrong = (i: number) => `wrong-token-${i}-0123456789`;

  it('10 wrong tokens from each of 11 addresses lock out none of them: the right token answers 200 everywhere', async () => {
    t.clock.advance(61_000);
    const attackers = Array.from({ length: 11 }, (_, a) => `198.51.100.${100 + a}`);
    for (const ip of attackers) for (let i = 0; i < 10; i++) expectError(await admin(wrong(i), ip), 401, 'UNAUTHORIZED');
    // A throttled source's wrong tokens answer 429 with the wait.
    const throttled = expectError(await admin(wrong(10), attackers[0] as string), 429, 'RATE_LIMITED');
    expect(Number(throttled.retry_after)).toBeGreaterThanOrEqual(1);
    expectError(await admin('', attackers[3] as string), 429, 'RATE_LIMITED');
    // The right token: from a 12th address and from a throttled one.
    expect((await admin(ADMIN_TOKEN, '192.0.2.12')).statusCode).toBe(200);
    for (const ip of attackers) expect((await admin(ADMIN_TOKEN, ip)).statusCode).toBe(200);
    // A right token does not clear the source's failures.
    expectError(await admin(wrong(11), attackers[0] as string), 429, 'RATE_LIMITED');
    // A fresh address still gets 401 for a wrong token.
    expectError(await admin(wrong(0), '192.0.2.13'), 401, 'UNAUTHORIZED');
    t.clock.advance(61_000);
    expectError(await admin(wrong(12), attackers[0] as string), 401, 'UNAUTHORIZED');
  });

  it('addresses of one IPv6 /64 share a bucket; another /64 has its own', async () => {
    t.clock.advance(61_000);
    for (let i = 0; i < 10; i++) expectError(await admin(wrong(i), `2001:db8:1:2::${(i + 1).toString(16)}`), 401, 'UNAUTHORIZED');
    expectError(await admin(wrong(10), '2001:db8:1:2:ffff:ffff:ffff:ffff'), 429, 'RATE_LIMITED');
    expectError(await admin(wrong(10), '2001:db8:1:3::1'), 401, 'UNAUTHORIZED');
    expect((await admin(ADMIN_TOKEN, '2001:db8:1:2::99')).statusCode).toBe(200);
    // IPv4 is counted per address.
    for (let i = 0; i < 10; i++) expectError(await admin(wrong(i), '203.0.113.50'), 401, 'UNAUTHORIZED');
    expectError(await admin(wrong(10), '203.0.113.51'), 401, 'UNAUTHORIZED');
    expectError(await admin(wrong(10), '::ffff:203.0.113.50'), 429, 'RATE_LIMITED');
  });

  it('sources beyond the table bound push out the least recently failing one', async () => {
    t.clock.advance(61_000);
    for (let i = 0; i < 10; i++) await admin(wrong(i), '198.51.100.7');
    expectError(await admin(wrong(10), '198.51.100.7'), 429, 'RATE_LIMITED');
    // As many other sources as the table holds, one failure each (an attacker rotating addresses).
    for (let n = 0; n < ADMIN_FAILURE_LIMITS.maxSources; n++) await admin(wrong(n), `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`);
    // The first source was forgotten: its next wrong token is counted again (401), not refused.
    expectError(await admin(wrong(11), '198.51.100.7'), 401, 'UNAUTHORIZED');
    expect((await admin(ADMIN_TOKEN, '198.51.100.7')).statusCode).toBe(200);
  });
});

describe('key guessing on /v1 has no bucket over all addresses either', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ VIGIL_IP_LIMIT: '5' });
  });
  afterAll(() => t.close());

  it('11 addresses capped for guessing keys leave the right key answered from any other address', async () => {
    const { secret } = await t.account('pro');
    const usage = (key: string, remoteAddress: string) => t.vigil.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(key), remoteAddress });
    for (let a = 0; a < 11; a++) {
      for (let i = 0; i < 5; i++) expectError(await usage(`vgl_sk_${'A'.repeat(31)}${i}`, `198.51.100.${a}`), 401, 'UNAUTHORIZED');
      expectError(await usage(`vgl_sk_${'B'.repeat(32)}`, `198.51.100.${a}`), 429, 'RATE_LIMITED');
    }
    expect((await usage(secret, '192.0.2.12')).statusCode).toBe(200);
  });
});
