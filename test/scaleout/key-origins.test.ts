/**
 * Allowed origins changed through one instance reach every instance: the others read keys and
 * origins through caches of 2 seconds, so a browser is admitted everywhere once they expire.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, type TestApp } from '../helpers/app.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';
import { describePostgres } from '../storage/pg-helpers.js';
import { sharedInstances, type Cluster } from './shared-backends.js';

const redis = await connectTestRedis('key-origins');

describePostgres('allowed origins across instances', () => {
  describeWithRedis('two instances', redis, (r) => {
    let c: Cluster;
    beforeAll(async () => {
      c = await sharedInstances(2, r);
    }, 120_000);
    afterAll(() => c?.close(), 60_000);

    it('origins set through one instance admit the browser on the other within the cache lifetime', async () => {
      const [a, b] = c.apps as [TestApp, TestApp];
      const acct = await a.account('pro');
      const origin = 'https://app.example.com';
      const fromBrowser = async (t: TestApp) =>
        (await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: { ...bearer(acct.publishable), origin }, payload: { event: 'auth.login' } }))
          .statusCode;
      const preflight = async (t: TestApp) =>
        (await t.vigil.app.inject({ method: 'OPTIONS', url: '/v1/events', headers: { origin, 'access-control-request-method': 'POST' } })).headers[
          'access-control-allow-origin'
        ];
      expect(await fromBrowser(b)).toBe(403);
      expect(await preflight(b)).toBeUndefined();

      const keys = (await a.vigil.app.inject({ method: 'GET', url: `/admin/accounts/${acct.id}/keys`, headers: bearer(ADMIN_TOKEN) })).json().data as {
        id: string;
        kind: string;
      }[];
      const id = keys.find((k) => k.kind === 'publishable')?.id as string;
      const patched = await a.vigil.app.inject({
        method: 'PATCH',
        url: `/admin/keys/${id}`,
        headers: bearer(ADMIN_TOKEN),
        payload: { allowed_origins: [origin] },
      });
      expect(patched.statusCode).toBe(200);
      expect(await fromBrowser(a)).toBe(202);

      c.clock.advance(2_001);
      expect(await fromBrowser(b)).toBe(202);
      expect(await preflight(b)).toBe(origin);
    });
  });
});
