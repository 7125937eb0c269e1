import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, testApp, type TestApp } from '../helpers/app.js';

describe('smoke', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp();
    key = (await t.account('pro')).secret;
  });
  afterAll(() => t.close());

  it('accepts an event and stores it', async () => {
    const res = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: bearer(key),
      payload: { event: 'auth.login.failure', actor_id: 'u1', ip: '8.8.8.8' },
    });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.status).toBe('accepted');
    expect(body.id).toMatch(/^evt_/);
    const got = await t.vigil.app.inject({ method: 'GET', url: `/v1/events/${body.id}`, headers: bearer(key) });
    expect(got.statusCode).toBe(200);
    expect(got.json().event).toBe('auth.login.failure');
    expect(res.headers['x-ratelimit-limit']).toBe('1000');
  });
});
