import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/util/ids.js';
import type { AlertRow } from '../../src/storage/types.js';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { expectError, getJson, roomyApp } from './support.js';

/** One grammar for every list endpoint's name filter: the exact name, or a prefix ending in ".*". */
describe('list filters', () => {
  let t: TestApp;
  let acct: { id: string; secret: string };
  const types = ['request.sql_injection', 'request.xss', 'auth.brute_force.account', 'auth.brute_force.ip', 'requests.other'];
  beforeAll(async () => {
    t = await roomyApp({ VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32' });
    acct = await t.account('pro');
    const now = t.clock.now();
    const alerts: AlertRow[] = types.map((type) => ({
      id: newId('alr', now),
      accountId: acct.id,
      type,
      severity: 'high',
      subject: 'actor',
      status: 'open',
      count: 1,
      firstSeen: now,
      lastSeen: now,
      actorId: 'actor',
      eventIds: [],
      details: {},
    }));
    await t.services.store.commit({ events: [], alerts: alerts.map((alert) => ({ alert, opened: true })), usage: [], idempotency: [] });
    for (const event of ['request.probe', 'auth.login.failure', 'requests.other']) {
      expect(
        (await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: `Bearer ${acct.secret}` }, payload: { event } })).statusCode,
      ).toBe(202);
    }
  });
  afterAll(() => t.close());

  const listed = async (path: string): Promise<string[]> => {
    const res = await getJson(t, acct.secret, path);
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
    return (res.json().data as { type?: string; event?: string }[]).map((x) => x.type ?? x.event ?? '').sort();
  };

  it('alerts: type=request.* lists the request alerts, auth.brute_force.* the two brute-force ones, an exact type one', async () => {
    expect(await listed('/v1/alerts?type=request.*')).toEqual(['request.sql_injection', 'request.xss']);
    expect(await listed('/v1/alerts?type=auth.brute_force.*')).toEqual(['auth.brute_force.account', 'auth.brute_force.ip']);
    expect(await listed('/v1/alerts?type=request.xss')).toEqual(['request.xss']);
  });

  it('events: the same grammar', async () => {
    expect(await listed('/v1/events?type=request.*')).toEqual(['request.probe']);
    expect(await listed('/v1/events?type=auth.login.failure')).toEqual(['auth.login.failure']);
  });

  it.each(['/v1/alerts', '/v1/events'])('%s: a * anywhere but a trailing ".*" is a 400 naming the grammar, not an empty list', async (path) => {
    for (const bad of ['request*', '*.xss', '*', 'Request.*', 'request.*.x']) {
      const body = expectError(await getJson(t, acct.secret, `${path}?type=${encodeURIComponent(bad)}`), 400, 'INVALID_REQUEST');
      expect(body.details?.[0]?.field).toBe('type');
      expect(body.message).toContain('type must be');
    }
  });

  it('every list answers 400 for a parameter it does not take, instead of ignoring it', async () => {
    const hook = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { authorization: `Bearer ${acct.secret}` },
      payload: { url: 'http://127.0.0.1:9/hook' },
    });
    expect({ status: hook.statusCode, body: hook.body }).toMatchObject({ status: 201 });
    const webhookId = hook.json().id as string;
    const lists = ['/v1/events', '/v1/alerts', '/v1/webhooks', '/v1/threat-models', `/v1/webhooks/${webhookId}/deliveries`];
    for (const path of lists) {
      const body = expectError(await getJson(t, acct.secret, `${path}?typo=1`), 400, 'INVALID_REQUEST');
      expect({ path, details: body.details }).toEqual({ path, details: [expect.objectContaining({ field: 'typo' })] });
    }
    const admin = await t.vigil.app.inject({ method: 'GET', url: '/admin/accounts?typo=1', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expectError(admin, 400, 'INVALID_REQUEST');
  });
});
