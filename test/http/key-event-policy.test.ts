import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHABLE_KEY_EVENT_FAMILIES } from '../../src/catalog/key-kinds.js';
import type { TestApp } from '../helpers/app.js';
import { allEvents, expectError, getJson, postEvent, roomyApp, usedThisMonth } from './support.js';

const BATCH = '/v1/events/batch';
const BROWSER = '203.0.113.50';

describe('event types a publishable key may send', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    t = await roomyApp();
    acct = await t.account('pro');
  });
  afterAll(() => t.close());

  const fromBrowser = (payload: unknown, url = '/v1/events') =>
    t.vigil.app.inject({ method: 'POST', url, remoteAddress: BROWSER, headers: { authorization: `Bearer ${acct.publishable}` }, payload: payload as object });
  const alerts = async () => (await getJson(t, acct.secret, '/v1/alerts?limit=500')).json().data as { type: string }[];

  it('server.* (host agent only): 403 EVENT_TYPE_NOT_ALLOWED_FOR_KEY; no event, no alert, no quota', async () => {
    const usedBefore = await usedThisMonth(t, acct.secret);
    const res = await fromBrowser({ event: 'server.log.cleared', host: 'web-1', actor_id: 'victim' });
    const body = expectError(res, 403, 'EVENT_TYPE_NOT_ALLOWED_FOR_KEY');
    expect(body.message).toContain('server.log.cleared');
    for (const family of PUBLISHABLE_KEY_EVENT_FAMILIES) expect(body.message).toContain(`${family}.*`);
    expect(body.details).toEqual([{ field: 'event', message: expect.stringContaining('server.log.cleared') as string }]);
    expect(await alerts()).toEqual([]);
    expect(await allEvents(t, acct.secret, 'actor_id=victim')).toEqual([]);
    expect(await usedThisMonth(t, acct.secret)).toBe(usedBefore);
  });

  it.each(['admin.user.impersonated', 'account.role.changed', 'data.exported', 'api.request', 'billing.refund'])('%s: 403', async (type) => {
    expectError(await fromBrowser({ event: type, actor_id: 'victim' }), 403, 'EVENT_TYPE_NOT_ALLOWED_FOR_KEY');
  });

  it('a batch with one refused type is refused whole, details naming its index', async () => {
    const usedBefore = await usedThisMonth(t, acct.secret);
    const events = [{ event: 'auth.login.failure' }, { event: 'custom.page.viewed' }, { event: 'admin.user.impersonated' }, { event: 'auth.logout' }].map(
      (e) => ({
        ...e,
        actor_id: 'batch-victim',
      }),
    );
    const body = expectError(await fromBrowser({ events }, BATCH), 403, 'EVENT_TYPE_NOT_ALLOWED_FOR_KEY');
    expect(body.details).toEqual([{ index: 2, field: 'event', message: expect.stringContaining('admin.user.impersonated') as string }]);
    expect(await allEvents(t, acct.secret, 'actor_id=batch-victim')).toEqual([]);
    expect(await usedThisMonth(t, acct.secret)).toBe(usedBefore);
  });

  it('an invalid event in the same batch is still reported as a 400 (the body is wrong before the key matters)', async () => {
    const events = [{ event: 'server.log.cleared' }, { event: 'Not A Type' }];
    expect(expectError(await fromBrowser({ events }, BATCH), 400, 'INVALID_EVENT').details?.[0]).toMatchObject({ index: 1, field: 'event' });
  });

  it('the browser families are accepted: auth.* and custom.*, single and batched', async () => {
    expect((await fromBrowser({ event: 'auth.login.failure', actor_id: 'browser-ok' })).statusCode).toBe(202);
    expect((await fromBrowser({ event: 'auth.login', actor_id: 'browser-ok' })).statusCode).toBe(202);
    const res = await fromBrowser(
      {
        events: [
          { event: 'custom.page.viewed', actor_id: 'browser-ok' },
          { event: 'custom.checkout.opened', actor_id: 'browser-ok' },
        ],
      },
      BATCH,
    );
    expect(res.statusCode).toBe(202);
    expect(await allEvents(t, acct.secret, 'actor_id=browser-ok')).toHaveLength(4);
  });

  it('an ip in the body is replaced by the connecting address', async () => {
    const res = await fromBrowser({ event: 'auth.login.failure', actor_id: 'ip-forger', ip: '1.2.3.4' });
    expect(res.statusCode).toBe(202);
    expect((await getJson(t, acct.secret, `/v1/events/${res.json().id}`)).json().ip).toBe(BROWSER);
    // Not even a malformed one is looked at: it is not the event's address.
    const malformed = await fromBrowser({ events: [{ event: 'auth.login', actor_id: 'ip-forger', ip: 'not an address' }] }, BATCH);
    expect(malformed.statusCode).toBe(202);
    expect((await getJson(t, acct.secret, `/v1/events/${malformed.json().results[0].id}`)).json().ip).toBe(BROWSER);
  });

  it('a secret key may send every family, with the ip it names', async () => {
    for (const event of ['server.log.cleared', 'admin.user.impersonated', 'account.role.changed', 'data.exported', 'billing.refund']) {
      const res = await postEvent(t, acct.secret, { event, actor_id: 'server-side', host: 'web-1', ip: '1.2.3.4' });
      expect({ event, status: res.statusCode }).toEqual({ event, status: 202 });
      expect((await getJson(t, acct.secret, `/v1/events/${res.json().id}`)).json().ip).toBe('1.2.3.4');
    }
    expect((await alerts()).map((a) => a.type)).toContain('host.log_tampering');
  });

  it('docs/reference/api.md names the same families as the code', () => {
    const api = readFileSync(new URL('../../docs/reference/api.md', import.meta.url), 'utf8');
    const families = PUBLISHABLE_KEY_EVENT_FAMILIES.map((f) => `\`${f}.*\``);
    const list = families.length === 1 ? families[0] : `${families.slice(0, -1).join(', ')} and ${families.at(-1)}`;
    expect(api.replace(/\s+/g, ' ')).toContain(`send only ${list} events`);
  });
});
