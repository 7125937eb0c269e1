/**
 * Redis stopped and restarted under traffic (fault tests): two instances keep
 * answering through their local state while it is away, and every 202 is stored exactly once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { allEvents, highLimitPlansFile } from '../http/support.js';
import { connectTestRedis, describeWithRedis, redisAddress, redisUrlThrough } from '../limits/redis-helper.js';
import { describePostgres } from '../storage/pg-helpers.js';
import { TcpProxy } from '../storage/tcp-proxy.js';
import { sharedInstances, type Cluster } from './shared-backends.js';
import { until } from '../helpers/until.js';

const redis = await connectTestRedis('redis-restart');

describePostgres('Redis restart under traffic', () => {
  describeWithRedis('two instances through a proxy to Redis', redis, (r) => {
    const proxy = new TcpProxy(redisAddress().host, redisAddress().port);
    let c: Cluster;
    beforeAll(async () => {
      const port = await proxy.start();
      c = await sharedInstances(2, r, { VIGIL_PLANS_FILE: highLimitPlansFile() }, redisUrlThrough(port));
      await until(() => c.apps.every((t) => t.services.redisHealth?.degraded === false), 'every instance healthy');
    }, 180_000);
    afterAll(async () => {
      await c?.close();
      await proxy.stop();
    }, 60_000);

    it('every 202 is stored exactly once, before, during and after the outage', async () => {
      const { secret } = await (c.apps[0] as TestApp).account('pro');
      const accepted: string[] = [];
      let degraded = 0;
      let sent = 0;
      const wave = () =>
        Promise.all(
          Array.from({ length: 8 }, async (_, i) => {
            const n = sent++;
            const res = await (c.apps[i % 2] as TestApp).vigil.app.inject({
              method: 'POST',
              url: '/v1/events',
              headers: bearer(secret),
              payload: { event: 'auth.login.failure', actor_id: `u${n % 5}`, ip: '203.0.113.7' },
            });
            if (res.statusCode !== 202) return;
            const body = res.json();
            accepted.push(body.id);
            if (body.degraded) degraded++;
          }),
        );
      const waves = async (n: number) => {
        for (let i = 0; i < n; i++) {
          await wave();
          c.clock.advance(100);
        }
      };
      await waves(5);
      const stopping = proxy.stop(); // drops the connections while the next waves are in flight
      await waves(5);
      await stopping;
      await until(() => c.apps.every((t) => t.services.redisHealth?.degraded === true), 'every instance degraded');
      await waves(5);
      const starting = proxy.start();
      await waves(5);
      await starting;
      await until(() => c.apps.every((t) => t.services.redisHealth?.degraded === false), 'every instance healthy');
      await waves(5);

      expect(degraded).toBeGreaterThan(0);
      expect(degraded).toBeLessThan(accepted.length);
      expect(new Set(accepted).size).toBe(accepted.length);
      const stored = (await allEvents(c.apps[1] as TestApp, secret)).map((e) => e.id as string);
      expect(stored.length).toBe(accepted.length);
      expect(new Set(stored)).toEqual(new Set(accepted));
    });
  });
});
