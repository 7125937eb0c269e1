import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertRow } from '../../src/storage/types.js';
import { newId } from '../../src/util/ids.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { allEvents, expectError, getJson, postEvent, roomyApp } from './support.js';

type Acct = { id: string; secret: string; publishable: string };

describe('account isolation', () => {
  let t: TestApp;
  let a: Acct;
  let b: Acct;
  const ids: Record<string, string[]> = { a: [], b: [] };
  const alerts: Record<string, string> = {};

  async function alertFor(acct: Acct): Promise<string> {
    const now = t.clock.now();
    const alert: AlertRow = {
      id: newId('alr', now),
      accountId: acct.id,
      type: 'auth.brute_force.account',
      severity: 'high',
      subject: 'shared-actor',
      status: 'open',
      count: 1,
      firstSeen: now,
      lastSeen: now,
      actorId: 'shared-actor',
      eventIds: [],
      details: {},
    };
    await t.services.store.commit({ events: [], alerts: [{ alert, opened: true }], usage: [], idempotency: [] });
    return alert.id;
  }

  beforeAll(async () => {
    t = await roomyApp();
    a = await t.account('pro');
    b = await t.account('pro');
    for (const [name, acct] of [
      ['a', a],
      ['b', b],
    ] as const) {
      for (let i = 0; i < 3; i++) {
        const res = await postEvent(t, acct.secret, { event: 'auth.login.failure', actor_id: 'shared-actor', ip: '192.0.2.1', event_id: `e${i}` });
        ids[name]?.push(res.json().id);
      }
      alerts[name] = await alertFor(acct);
    }
  });
  afterAll(() => t.close());

  it('each account lists only its own events, with every filter', async () => {
    for (const query of ['', 'actor_id=shared-actor', 'ip=192.0.2.1', 'type=auth.login.failure', 'type=auth.*']) {
      expect((await allEvents(t, a.secret, query)).map((e) => e.id).sort()).toEqual([...(ids.a ?? [])].sort());
      expect((await allEvents(t, b.secret, query)).map((e) => e.id).sort()).toEqual([...(ids.b ?? [])].sort());
    }
  });

  it("another account's event by id is 404, the same as an unknown id", async () => {
    for (const id of ids.b ?? []) {
      expectError(await getJson(t, a.secret, `/v1/events/${id}`), 404, 'NOT_FOUND');
      expect((await getJson(t, b.secret, `/v1/events/${id}`)).statusCode).toBe(200);
    }
  });

  it('a cursor taken from another account does not reveal its events', async () => {
    const page = (await getJson(t, b.secret, '/v1/events?limit=1')).json();
    const cursor = page.next_cursor as string;
    expect(cursor).toBeTruthy();
    const fromA = (await getJson(t, a.secret, `/v1/events?cursor=${cursor}`)).json();
    for (const e of fromA.data) expect(ids.a).toContain(e.id);
  });

  it('each account lists only its own alerts', async () => {
    const listA = (await getJson(t, a.secret, '/v1/alerts')).json();
    expect(listA.data.map((x: { id: string }) => x.id)).toEqual([alerts.a]);
    const listB = (await getJson(t, b.secret, '/v1/alerts?actor_id=shared-actor')).json();
    expect(listB.data.map((x: { id: string }) => x.id)).toEqual([alerts.b]);
  });

  it("another account's alert is 404 by id and cannot be changed", async () => {
    expectError(await getJson(t, a.secret, `/v1/alerts/${alerts.b}`), 404, 'NOT_FOUND');
    const patch = await t.vigil.app.inject({ method: 'PATCH', url: `/v1/alerts/${alerts.b}`, headers: bearer(a.secret), payload: { status: 'resolved' } });
    expectError(patch, 404, 'NOT_FOUND');
    expect((await getJson(t, b.secret, `/v1/alerts/${alerts.b}`)).json().status).toBe('open');
    const own = await t.vigil.app.inject({ method: 'PATCH', url: `/v1/alerts/${alerts.a}`, headers: bearer(a.secret), payload: { status: 'acknowledged' } });
    expect(own.statusCode).toBe(200);
    expect(own.json().status).toBe('acknowledged');
  });

  it('usage is per account', async () => {
    expect((await getJson(t, a.secret, '/v1/usage')).json().used).toBe(3);
    expect((await getJson(t, b.secret, '/v1/usage')).json().used).toBe(3);
  });
});
