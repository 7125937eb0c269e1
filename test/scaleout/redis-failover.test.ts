import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, testApp, type TestApp } from '../helpers/app.js';
import { connectTestRedis, describeWithRedis, redisAddress, redisUrlThrough } from '../limits/redis-helper.js';
import { TcpProxy } from '../storage/tcp-proxy.js';
import { until } from '../helpers/until.js';
import { connectionReady, openRedis } from '../../src/redis/backend.js';

const redis = await connectTestRedis('redis-failover');

describeWithRedis('Redis unreachable or silent: local state, degraded marking, recovery', redis, (r) => {
  const proxy = new TcpProxy(redisAddress().host, redisAddress().port);
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    const port = await proxy.start();
    t = await testApp({ VIGIL_REDIS_URL: redisUrlThrough(port), VIGIL_REDIS_PREFIX: r.prefix });
    await until(() => t.services.redisHealth?.degraded === false, 'Redis healthy');
    key = (await t.account('pro')).secret;
  });
  afterAll(async () => {
    proxy.release();
    await t.close();
    await proxy.stop();
  });

  const send = (i: number) =>
    t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: { event: 'auth.login.success', actor_id: `u${i}` } });

  it('serves from Redis, then from local state while it is away, then from Redis again; every 202 is stored', async () => {
    const ok = await send(1);
    expect(ok.statusCode).toBe(202);
    expect(ok.json().degraded).toBeUndefined();
    expect(await r.client.keys(`${r.prefix}*`)).not.toHaveLength(0);

    await proxy.stop();
    await until(() => t.services.redisHealth?.degraded === true, 'Redis marked degraded', 5_000);
    const during = await send(2);
    expect(during.statusCode).toBe(202);
    expect(during.json().degraded).toBe(true);
    expect(during.headers['x-ratelimit-limit']).toBe('1000');
    const stored = await t.vigil.app.inject({ method: 'GET', url: `/v1/events/${during.json().id}`, headers: bearer(key) });
    expect(stored.json().degraded).toBe(true);
    const metrics = await t.vigil.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/vigil_backend_degraded 1/);

    await proxy.start();
    await until(() => t.services.redisHealth?.degraded === false, 'Redis healthy again', 10_000);
    const after = await send(3);
    expect(after.statusCode).toBe(202);
    expect(after.json().degraded).toBeUndefined();

    const list = await t.vigil.app.inject({ method: 'GET', url: '/v1/events?limit=10', headers: bearer(key) });
    expect(list.json().data).toHaveLength(3);
  });

  it('answers on local state instead of waiting for a Redis that stops answering, and serves from Redis again once it answers', async () => {
    expect((await send(10)).json().degraded).toBeUndefined();
    proxy.hold();
    // Without a bound on each command these would wait for Redis as long as it holds its answers.
    const during = [await send(11), await send(12)];
    expect(during.map((res) => [res.statusCode, res.json().degraded])).toEqual([
      [202, true],
      [202, true],
    ]);
    proxy.release();
    let answeredByRedis = false;
    for (let i = 13; !answeredByRedis && i < 113; i++) {
      answeredByRedis = (await send(i)).json().degraded === undefined;
      if (!answeredByRedis) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answeredByRedis).toBe(true);
    expect(t.services.redisHealth?.degraded).toBe(false);
  });
});

const redisAtStart = await connectTestRedis('redis-failover-at-start');

describeWithRedis('Redis unreachable when the service starts', redisAtStart, (r) => {
  const proxy = new TcpProxy(redisAddress().host, redisAddress().port);
  let t: TestApp | undefined;
  // A port of its own, closed: each test brings Redis up behind it when it needs to.
  beforeAll(async () => {
    await proxy.start();
    await proxy.stop();
  });
  afterAll(async () => {
    await t?.close();
    await proxy.stop();
  });

  it('connectionReady answers true for a reachable Redis and false once the wait ends for an unreachable one', async () => {
    const port = await proxy.start();
    const reachable = await openRedis(redisUrlThrough(port));
    const ready = await connectionReady(reachable, 10_000);
    await proxy.stop();
    const unreachable = await openRedis(redisUrlThrough(port));
    try {
      expect(ready).toBe(true);
      expect(await connectionReady(unreachable, 300)).toBe(false);
    } finally {
      reachable.disconnect();
      unreachable.disconnect();
    }
  });

  it('waits at start-up for a Redis that comes up meanwhile: the first request already uses it', async () => {
    const late = setTimeout(() => void proxy.start(), 1_000);
    const early = await testApp({ VIGIL_REDIS_URL: redisUrlThrough(proxy.port), VIGIL_REDIS_PREFIX: r.prefix });
    try {
      const key = (await early.account('pro')).secret;
      const first = await early.vigil.app.inject({
        method: 'POST',
        url: '/v1/events',
        headers: bearer(key),
        payload: { event: 'auth.login.success', actor_id: 'u0' },
      });
      expect(first.statusCode).toBe(202);
      expect(first.json().degraded).toBeUndefined();
    } finally {
      clearTimeout(late);
      await early.close();
      await proxy.stop();
    }
  });

  it('starts after the wait and serves on local state, then on Redis once it is up', async () => {
    t = await testApp({ VIGIL_REDIS_URL: redisUrlThrough(proxy.port), VIGIL_REDIS_PREFIX: r.prefix });
    const key = (await t.account('pro')).secret;
    const send = (actor: string) =>
      (t as TestApp).vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: { event: 'auth.login.success', actor_id: actor } });
    const first = await send('u1');
    expect(first.statusCode).toBe(202);
    expect(first.json().degraded).toBe(true);
    await proxy.start();
    await until(() => t?.services.redisHealth?.degraded === false, 'Redis healthy', 15_000);
    const later = await send('u2');
    expect(later.statusCode).toBe(202);
    expect(later.json().degraded).toBeUndefined();
  });
});
