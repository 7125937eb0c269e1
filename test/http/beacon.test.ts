import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { expectError, roomyApp } from './support.js';

/** navigator.sendBeacon sends text/plain without custom headers: the key comes in the URL. */
describe('page-hide beacons: publishable key in the URL, JSON as text/plain', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    t = await roomyApp();
    acct = await t.account('pro', ['https://shop.example']);
  });
  afterAll(() => t.close());

  const beacon = (url: string, payload: string, origin = 'https://shop.example') =>
    t.vigil.app.inject({ method: 'POST', url, headers: { 'content-type': 'text/plain;charset=UTF-8', origin }, payload });
  const stored = async () =>
    (await t.vigil.app.inject({ method: 'GET', url: '/v1/events?limit=500', headers: bearer(acct.secret) })).json().data as { event: string }[];

  it('a batch with ?api_key=<publishable> and a text/plain JSON body is accepted and stored', async () => {
    const body = JSON.stringify({
      events: [
        { event: 'custom.page.hidden', event_id: 'beacon-1' },
        { event: 'custom.page.hidden', event_id: 'beacon-2' },
      ],
    });
    const res = await beacon(`/v1/events/batch?api_key=${acct.publishable}`, body);
    expect(res.statusCode).toBe(202);
    expect(res.json().accepted).toBe(2);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect((await stored()).filter((e) => e.event === 'custom.page.hidden')).toHaveLength(2);
  });

  it('a single event works the same way', async () => {
    const res = await beacon(`/v1/events?api_key=${acct.publishable}`, JSON.stringify({ event: 'custom.page.left' }));
    expect(res.statusCode).toBe(202);
  });

  it('a secret key in the URL is refused (401), nothing stored', async () => {
    const before = (await stored()).length;
    const res = await beacon(`/v1/events?api_key=${acct.secret}`, JSON.stringify({ event: 'custom.page.left' }));
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.json().message).toMatch(/publishable key/);
    expect(await stored()).toHaveLength(before);
  });

  it('the key kind checks still apply: an origin the key does not list is 403', async () => {
    expectError(
      await beacon(`/v1/events?api_key=${acct.publishable}`, JSON.stringify({ event: 'custom.page.left' }), 'https://evil.example'),
      403,
      'FORBIDDEN',
    );
  });

  it('text/plain that is not JSON is 400 INVALID_JSON', async () => {
    expectError(await beacon(`/v1/events?api_key=${acct.publishable}`, 'not json'), 400, 'INVALID_JSON');
  });

  it('text/plain with the key in a header (not a beacon) is still 415', async () => {
    const res = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: { ...bearer(acct.publishable), 'content-type': 'text/plain' },
      payload: JSON.stringify({ event: 'custom.page.left' }),
    });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('text/plain is still 415 outside the ingestion routes', async () => {
    const res = await t.vigil.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      headers: { ...bearer(acct.secret), 'content-type': 'text/plain' },
      payload: '{}',
    });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a key in the URL is not read on the read routes', async () => {
    expectError(await t.vigil.app.inject({ method: 'GET', url: `/v1/events?api_key=${acct.secret}` }), 401, 'UNAUTHORIZED');
  });
});
