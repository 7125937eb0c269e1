/**
 * Two accounts that reuse the same actor ids, addresses, session ids and event ids never see
 * each other's detection state, alerts or events. Runs in both projects: embedded (SQLite and
 * in-memory state) and scale-out (PostgreSQL and Redis through the same failover wrappers the
 * service uses in production).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { getJson, postEvent, roomyApp } from './support.js';

type Acct = { id: string; secret: string; publishable: string };
const alertTypes = (res: { json(): { alerts?: { type: string }[] } }) => (res.json().alerts ?? []).map((a) => a.type);

describe('accounts reusing the same actor and address: detection state stays per account', () => {
  let t: TestApp;
  let a: Acct;
  let b: Acct;

  beforeAll(async () => {
    t = await roomyApp();
    a = await t.account('pro');
    b = await t.account('pro');
  });
  afterAll(() => t.close());

  it("six failures in A, then six in B for its own 'alice' from the same address: B's answers carry no brute-force alert", async () => {
    const failure = { event: 'auth.login.failure', actor_id: 'alice', ip: '81.2.69.142', user_agent: 'Mozilla/5.0' };
    for (let i = 0; i < 6; i++) {
      const res = await postEvent(t, a.secret, failure);
      expect(res.statusCode).toBe(202);
      t.clock.advance(1_000);
    }
    const bAnswers = [];
    for (let i = 0; i < 6; i++) {
      const res = await postEvent(t, b.secret, failure);
      expect(res.statusCode).toBe(202);
      bAnswers.push(alertTypes(res));
      t.clock.advance(1_000);
    }
    expect(bAnswers).toEqual(Array(6).fill([]));
    // Four more in B make its own ten: now B's alert opens, from B's failures alone.
    const more = [];
    for (let i = 0; i < 4; i++) more.push(alertTypes(await postEvent(t, b.secret, failure)));
    expect(more.slice(0, 3)).toEqual(Array(3).fill([]));
    expect(more[3]).toContain('auth.brute_force.account');
    const bAlerts = (await getJson(t, b.secret, '/v1/alerts?type=auth.brute_force.account')).json().data;
    expect(bAlerts).toHaveLength(1);
    expect(bAlerts[0].count).toBe(1);
    expect((await getJson(t, a.secret, '/v1/alerts')).json().data).toEqual([]);
  });

  it("a login in B after A's login from another continent raises no impossible travel in B", async () => {
    const login = (ip: string) => ({ event: 'auth.login.success', actor_id: 'carol', ip, user_agent: 'Mozilla/5.0' });
    // A: London, then Tokyo ten minutes later: impossible travel in A.
    expect((await postEvent(t, a.secret, login('81.2.69.142'))).statusCode).toBe(202);
    t.clock.advance(10 * 60_000);
    const inA = await postEvent(t, a.secret, login('133.242.187.207'));
    expect(alertTypes(inA)).toContain('auth.impossible_travel');
    // B's first login for its own carol, from London a minute later: B has no earlier location.
    t.clock.advance(60_000);
    const inB = await postEvent(t, b.secret, login('81.2.69.142'));
    expect(inB.statusCode).toBe(202);
    expect(alertTypes(inB)).not.toContain('auth.impossible_travel');
    const bTravel = (await getJson(t, b.secret, '/v1/alerts?type=auth.impossible_travel')).json().data;
    expect(bTravel).toEqual([]);
  });
});
