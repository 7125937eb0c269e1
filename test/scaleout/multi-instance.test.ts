/**
 * Two instances sharing one PostgreSQL schema and one Redis prefix behave as one service
 * (issue 6): a key's RPM and the monthly quota hold jointly, and login failures spread over
 * both instances make one brute-force alert.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { describePostgres } from '../storage/pg-helpers.js';
import { plansFile, sharedInstances, type Cluster } from './shared-backends.js';

const redis = await connectTestRedis('multi-instance');

const post = (t: TestApp, key: string, payload: object) => t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload });
const get = (t: TestApp, key: string, url: string) => t.vigil.app.inject({ method: 'GET', url, headers: bearer(key) });

describePostgres('two instances, one service', () => {
  describeWithRedis('shared PostgreSQL + Redis', redis, (r) => {
    let c: Cluster;
    beforeAll(async () => {
      // Free keeps its 30 RPM and "drop" overage; a cap of 40 keeps the quota test short.
      c = await sharedInstances(2, r, { VIGIL_PLANS_FILE: plansFile({ free: { monthly_cap: 40 } }) });
    }, 180_000);
    afterAll(() => c?.close(), 60_000);

    it('a key gets its RPM once across both instances, and the free quota drops the 41st event of the month', async () => {
      const [a, b] = c.apps as [TestApp, TestApp];
      const { secret } = await a.account('free');
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        statuses.push((await post(i % 2 === 0 ? a : b, secret, { event: 'app.ping', actor_id: `u${i}` })).statusCode);
        c.clock.advance(250); // 4 per second: under the per-second limit, all inside one minute
      }
      expect(statuses.filter((s) => s === 202)).toHaveLength(30);
      expect(statuses.slice(30)).toEqual(Array(10).fill(429));

      c.clock.advance(2 * 60_000);
      const bodies: unknown[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await post(i % 2 === 0 ? b : a, secret, { event: 'app.ping', actor_id: `v${i}` });
        expect(res.statusCode).toBe(202);
        bodies.push(res.json().status);
        c.clock.advance(250);
      }
      expect(bodies).toEqual([...Array(10).fill('accepted'), 'dropped', 'dropped']);
      for (const t of [a, b]) expect((await get(t, secret, '/v1/usage')).json()).toMatchObject({ used: 40, cap: 40, remaining: 0, dropped: 2 });
      expect((await get(b, secret, '/v1/events?limit=100')).json().data).toHaveLength(40);
    });

    it('login failures of one actor spread over both instances raise one brute-force alert counting them all', async () => {
      const [a, b] = c.apps as [TestApp, TestApp];
      const { secret } = await a.account('pro');
      const raisedBy: string[][] = [];
      for (let i = 0; i < 14; i++) {
        const res = await post(i % 2 === 0 ? a : b, secret, { event: 'auth.login.failure', actor_id: 'victim', ip: `203.0.113.${i}` });
        expect(res.statusCode).toBe(202);
        raisedBy.push(((res.json().alerts ?? []) as { type: string; id: string }[]).filter((x) => x.type === 'auth.brute_force.account').map((x) => x.id));
        c.clock.advance(1_000);
      }
      // Neither instance alone saw 10 failures; together they did, from the 10th on.
      expect(raisedBy.slice(0, 9).flat()).toEqual([]);
      const ids = new Set(raisedBy.slice(9).flat());
      expect(ids.size).toBe(1);
      for (const t of [a, b]) {
        const list = (await get(t, secret, '/v1/alerts?type=auth.brute_force.account')).json().data as { id: string; count: number; actor_id?: string }[];
        expect(list).toHaveLength(1);
        expect(list[0]?.id).toBe([...ids][0]);
        expect(list[0]?.count).toBe(5); // opened by the 10th failure, updated by the 11th to 14th
      }
    });
  });
});
