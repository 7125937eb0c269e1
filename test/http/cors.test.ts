import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { expectError, roomyApp } from './support.js';

describe('browsers: publishable keys and CORS', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  let open: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    t = await roomyApp();
    acct = await t.account('pro', ['https://shop.example', 'https://www.shop.example']);
    open = await t.account('pro', ['*']);
  });
  afterAll(() => t.close());

  const send = (key: string, origin: string | undefined, url = '/v1/events', payload: object = { event: 'auth.login' }) =>
    t.vigil.app.inject({ method: 'POST', url, headers: { ...bearer(key), ...(origin ? { origin } : {}) }, payload });

  it('an allowed origin gets 202 with Access-Control-Allow-Origin and readable rate-limit headers', async () => {
    const res = await send(acct.publishable, 'https://shop.example');
    expect(res.statusCode).toBe(202);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(String(res.headers.vary)).toMatch(/Origin/);
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) expect(exposed).toContain(h);
  });

  it('an origin the key does not list is 403 FORBIDDEN, nothing stored', async () => {
    for (const origin of ['https://evil.example', 'http://shop.example', 'https://shop.example.evil.example', 'null']) {
      const res = await send(acct.publishable, origin);
      expectError(res, 403, 'FORBIDDEN');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
    const list = await t.vigil.app.inject({ method: 'GET', url: '/v1/events?limit=500', headers: bearer(acct.secret) });
    expect(list.json().data).toHaveLength(1);
  });

  it('"*" allows any origin', async () => {
    const res = await send(open.publishable, 'https://anything.example');
    expect(res.statusCode).toBe(202);
    expect(res.headers['access-control-allow-origin']).toBe('https://anything.example');
  });

  it('a publishable key without Origin (server-side use) is accepted', async () => {
    expect((await send(acct.publishable, undefined)).statusCode).toBe(202);
  });

  it('errors on an allowed origin stay readable by the page', async () => {
    const res = await send(acct.publishable, 'https://shop.example', '/v1/events', { event: 'Bad' });
    expectError(res, 400, 'INVALID_EVENT');
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
  });

  it.each(['/v1/events', '/v1/events/batch'])('preflight OPTIONS %s answers 204 with the allowed method and headers', async (url) => {
    const res = await t.vigil.app.inject({
      method: 'OPTIONS',
      url,
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const h of ['authorization', 'content-type', 'x-api-key']) expect(allowed).toContain(h);
  });

  it('read endpoints get no CORS answer: secret keys do not belong in browsers', async () => {
    const res = await t.vigil.app.inject({ method: 'GET', url: '/v1/events', headers: { ...bearer(acct.secret), origin: 'https://shop.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expectError(
      await t.vigil.app.inject({ method: 'GET', url: '/v1/events', headers: { ...bearer(acct.publishable), origin: 'https://shop.example' } }),
      403,
      'FORBIDDEN',
    );
  });
});
