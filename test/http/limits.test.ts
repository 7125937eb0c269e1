/**
 * Limits through HTTP: the real app on in-memory SQLite
 * and the in-memory limiter, a manual clock, requests by Fastify inject.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, bearer, testApp, type TestApp } from '../helpers/app.js';
import { connectTestRedis, describeWithRedis, REDIS_URL } from '../limits/redis-helper.js';

// Start-up loads enrichment data; under a loaded CI box an app takes seconds to build.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** This test's start time: a whole second, 10 minutes after the previous test's (so every window is empty again). */
let T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
let T0s = T0 / 1000;
const event = (i = 0) => ({ event: 'auth.login.failure', actor_id: `user${i}`, ip: '8.8.8.8' });

/**
 * One app per configuration, shared by the tests that need it (building one is slow).
 * Tests stay independent: each uses fresh accounts and starts 10 minutes after the last.
 */
const apps = new Map<string, Promise<TestApp>>();
async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const id = JSON.stringify(env);
  let pending = apps.get(id);
  if (!pending) {
    pending = testApp(env);
    apps.set(id, pending);
  }
  const t = await pending;
  T0 += 600_000;
  T0s = T0 / 1000;
  t.clock.set(T0);
  return t;
}
const extraClosers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all([...apps.values()].map(async (t) => (await t).close()));
  await Promise.all(extraClosers.map((close) => close()));
});

interface SendOptions {
  readonly batch?: number;
  readonly ip?: string;
  readonly headers?: Record<string, string>;
}

function send(t: TestApp, key: string, { batch, ip = '192.0.2.1', headers = {} }: SendOptions = {}): Promise<LightMyRequestResponse> {
  const single = batch === undefined;
  return t.vigil.app.inject({
    method: 'POST',
    url: single ? '/v1/events' : '/v1/events/batch',
    remoteAddress: ip,
    headers: { ...bearer(key), ...headers },
    payload: single ? event() : { events: Array.from({ length: batch }, (_, i) => event(i)) },
  });
}

async function usage(t: TestApp, secret: string): Promise<Record<string, unknown>> {
  const res = await t.vigil.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(secret), remoteAddress: '192.0.2.200' });
  expect(res.statusCode).toBe(200);
  return res.json();
}

function rateHeaders(res: LightMyRequestResponse) {
  return { limit: res.headers['x-ratelimit-limit'], remaining: res.headers['x-ratelimit-remaining'], reset: res.headers['x-ratelimit-reset'] };
}

/** The 429: headers, Remaining 0, and a body stating the seconds. */
function expectRateLimited(res: LightMyRequestResponse, seconds: number, limit: number): void {
  expect(res.statusCode).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['retry-after']).toBe(String(seconds));
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
  const body = res.json();
  expect(body.error).toBe('RATE_LIMITED');
  expect(body.retry_after).toBe(seconds);
  expect(body.message).toContain(`${seconds} second`);
}

describe('per-plan limits and headers', () => {
  const cases = [
    { plan: 'starter', rpm: 500, batch: 50 },
    { plan: 'pro', rpm: 1_000, batch: 100 },
    { plan: 'business', rpm: 2_000, batch: 100 },
  ];
  for (const { plan, rpm, batch } of cases) {
    it(`${plan}: ${rpm} events per minute in batches of ${batch}, then 429 until the oldest leave`, async () => {
      const t = await app();
      const { secret } = await t.account(plan);
      for (let sent = batch; sent <= rpm; sent += batch) {
        const res = await send(t, secret, { batch });
        expect(res.statusCode).toBe(202);
        expect(rateHeaders(res)).toEqual({ limit: String(rpm), remaining: String(rpm - sent), reset: String(T0s + 61) });
      }
      t.clock.advance(30_000);
      expectRateLimited(await send(t, secret), 31, rpm);
      t.clock.set(T0 + 61_000);
      expect((await send(t, secret, { batch })).statusCode).toBe(202);
    });
  }

  it('free: 30 events per minute, 5 requests per second, single events only', async () => {
    const t = await app();
    const { secret } = await t.account('free');
    for (let i = 0; i < 5; i++) expect((await send(t, secret)).statusCode).toBe(202);
    // The sixth request in the same second: the per-second window refuses, for up to 1.1 s.
    expectRateLimited(await send(t, secret), 2, 30);
    t.clock.advance(1_100);
    for (let i = 5; i < 30; i++) {
      const res = await send(t, secret);
      expect(res.statusCode).toBe(202);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(29 - i));
      t.clock.advance(300);
    }
    const res = await send(t, secret);
    expectRateLimited(res, Math.ceil((T0 + 61_000 - t.clock.now()) / 1000), 30);
    expect(res.headers['x-ratelimit-reset']).toBe(String(T0s + 61));
    const batch = await send(t, secret, { batch: 2 });
    expect(batch.statusCode).toBe(403);
    expect(batch.json().error).toBe('PLAN_UPGRADE_REQUIRED');
    expect(batch.headers['x-ratelimit-limit']).toBe('30');
  });

  it('headers on error responses too: 400 and 401 carry X-RateLimit-*', async () => {
    const t = await app();
    const { secret } = await t.account('pro');
    const invalid = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(secret), remoteAddress: '192.0.2.1', payload: { nope: 1 } });
    expect(invalid.statusCode).toBe(400);
    expect(rateHeaders(invalid)).toEqual({ limit: '1000', remaining: '1000', reset: String(T0s) });
    const unauthorized = await send(t, 'vgl_sk_not_a_key');
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('a plan change through the admin API applies to the windows at once', async () => {
    const t = await app();
    const { id, secret } = await t.account('free');
    for (let i = 0; i < 5; i++) await send(t, secret);
    expect((await send(t, secret)).statusCode).toBe(429);
    const patched = await t.vigil.app.inject({
      method: 'PATCH',
      url: `/admin/accounts/${id}`,
      headers: bearer(ADMIN_TOKEN),
      payload: { plan: 'pro' },
    });
    expect(patched.statusCode).toBe(200);
    const res = await send(t, secret);
    expect(res.statusCode).toBe(202);
    expect(rateHeaders(res)).toEqual({ limit: '1000', remaining: '994', reset: String(T0s + 61) });
  });
});

describe('batch accounting', () => {
  it('counts each event of a batch per minute, and refuses a batch that does not fit whole', async () => {
    const t = await app();
    const { secret } = await t.account('starter');
    for (let i = 0; i < 9; i++) expect((await send(t, secret, { batch: 50 })).statusCode).toBe(202);
    expect((await send(t, secret, { batch: 30 })).headers['x-ratelimit-remaining']).toBe('20');
    const refused = await send(t, secret, { batch: 21 });
    expectRateLimited(refused, 61, 500);
    const fits = await send(t, secret, { batch: 20 });
    expect(fits.statusCode).toBe(202);
    expect(fits.json().accepted).toBe(20);
    expect(await usage(t, secret)).toMatchObject({ used: 500, dropped: 0 });
  });

  it('counts a batch as one request per second (a 50-event batch passes Starter’s 25 per second)', async () => {
    const t = await app();
    const { secret } = await t.account('starter');
    for (let i = 0; i < 10; i++) expect((await send(t, secret, { batch: 1 })).statusCode).toBe(202);
    expect((await send(t, secret, { batch: 50 })).statusCode).toBe(202);
  });

  it('an oversized batch is 400 BATCH_TOO_LARGE and consumes nothing', async () => {
    const t = await app();
    const { secret } = await t.account('starter');
    const res = await send(t, secret, { batch: 51 });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('BATCH_TOO_LARGE');
    expect(res.headers['x-ratelimit-remaining']).toBe('500');
  });
});

describe('per-IP cap', () => {
  it('600 requests per minute from one address, across many keys', async () => {
    const t = await app();
    const keys = await Promise.all(Array.from({ length: 10 }, () => t.account('pro').then((a) => a.secret)));
    for (let i = 0; i < 600; i++) {
      const res = await send(t, keys[i % 10] as string, { ip: '198.51.100.9' });
      expect(res.statusCode).toBe(202);
      if (i % 20 === 19) t.clock.advance(1_000);
    }
    const capped = await send(t, keys[3] as string, { ip: '198.51.100.9' });
    expect(capped.statusCode).toBe(429);
    expect(capped.json().error).toBe('RATE_LIMITED');
    expect(capped.json().retry_after).toBe(Number(capped.headers['retry-after']));
    expect(capped.json().message).toContain(`${capped.json().retry_after} second`);
    // Another address is not affected, and the refused request was not counted for the key.
    expect((await send(t, keys[3] as string, { ip: '198.51.100.10' })).headers['x-ratelimit-remaining']).toBe('939');
  });

  it('requests with bad keys count too, so a key-guessing client is capped', async () => {
    const t = await app({ VIGIL_IP_LIMIT: '50' });
    const { secret } = await t.account('pro');
    for (let i = 0; i < 50; i++) expect((await send(t, `vgl_sk_guess${i}`, { ip: '203.0.113.66' })).statusCode).toBe(401);
    // Capped before authentication: a valid key, or a guessed one, gets the same 429.
    expect((await send(t, secret, { ip: '203.0.113.66' })).statusCode).toBe(429);
    expect((await send(t, 'vgl_sk_guess', { ip: '203.0.113.66' })).statusCode).toBe(429);
    expect((await send(t, secret, { ip: '203.0.113.67' })).statusCode).toBe(202);
  });

  it('per-address overrides from VIGIL_IP_LIMITS, most specific range first', async () => {
    const t = await app({ VIGIL_IP_LIMIT: '600', VIGIL_IP_LIMITS: '10.0.0.0/8=5,10.1.0.0/16=8' });
    const { secret } = await t.account('pro');
    const accepted = async (ip: string) => {
      let n = 0;
      while ((await send(t, secret, { ip })).statusCode === 202) n++;
      return n;
    };
    expect(await accepted('10.2.0.1')).toBe(5);
    expect(await accepted('10.1.0.1')).toBe(8);
  });

  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    const t = await app({ VIGIL_IP_LIMIT: '3', VIGIL_TRUST_PROXY: '10.0.0.1' });
    const { secret } = await t.account('pro');
    const viaProxy = (client: string) => send(t, secret, { ip: '10.0.0.1', headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < 3; i++) expect((await viaProxy('203.0.113.1')).statusCode).toBe(202);
    expect((await viaProxy('203.0.113.1')).statusCode).toBe(429);
    // Each client behind the proxy has its own cap; the proxy's address is not capped as one.
    expect((await viaProxy('203.0.113.2')).statusCode).toBe(202);
    // From an untrusted peer, a spoofed header changes nothing: the socket address is capped.
    const spoofed = (i: number) => send(t, secret, { ip: '198.51.100.50', headers: { 'x-forwarded-for': `203.0.113.${100 + i}` } });
    for (let i = 0; i < 3; i++) expect((await spoofed(i)).statusCode).toBe(202);
    expect((await spoofed(3)).statusCode).toBe(429);
  });
});

describe('monthly quota', () => {
  async function seedUsage(t: TestApp, accountId: string, period: string, used: number): Promise<void> {
    await t.services.store.commit({ events: [], alerts: [], idempotency: [], usage: [{ accountId, period, day: `${period}-01`, used, dropped: 0 }] });
  }

  it('Free: past 2,500 events, 202 {"status":"dropped"}, nothing stored, counted as dropped', async () => {
    const t = await app();
    const { id, secret } = await t.account('free');
    await seedUsage(t, id, '2026-01', 2_499);
    const last = await send(t, secret);
    expect(last.statusCode).toBe(202);
    expect(last.json().status).toBe('accepted');
    const dropped = await send(t, secret);
    expect(dropped.statusCode).toBe(202);
    expect(dropped.json()).toEqual({ status: 'dropped' });
    expect(dropped.headers['x-ratelimit-remaining']).toBe('28');
    expect(await usage(t, secret)).toMatchObject({ used: 2_500, cap: 2_500, remaining: 0, dropped: 1, overage_events: 0 });
    const events = await t.vigil.app.inject({ method: 'GET', url: '/v1/events', headers: bearer(secret), remoteAddress: '192.0.2.200' });
    expect(events.json().data ?? events.json().events).toHaveLength(1);
  });

  it('Free: dropped at 23:59:59.999 on the 31st, accepted at 00:00:00 on the 1st (UTC)', async () => {
    const t = await app();
    const { id, secret } = await t.account('free');
    await seedUsage(t, id, '2026-01', 2_500);
    t.clock.set(Date.UTC(2026, 0, 31, 23, 59, 59, 999));
    expect((await send(t, secret)).json()).toEqual({ status: 'dropped' });
    t.clock.set(Date.UTC(2026, 1, 1, 0, 0, 0, 0));
    const res = await send(t, secret);
    expect(res.json().status).toBe('accepted');
    expect(await usage(t, secret)).toMatchObject({ used: 1, remaining: 2_499, dropped: 0 });
  });

  it('paid: accepted past the cap and billed as overage (Starter 0.40 USD per 1,000)', async () => {
    const t = await app();
    const { id, secret } = await t.account('starter');
    await seedUsage(t, id, '2026-01', 24_990);
    for (let i = 0; i < 4; i++) {
      const res = await send(t, secret, { batch: 50 });
      expect(res.statusCode).toBe(202);
      expect(res.json().accepted).toBe(50);
    }
    expect(await usage(t, secret)).toMatchObject({
      used: 25_190,
      cap: 25_000,
      remaining: 0,
      dropped: 0,
      overage_events: 190,
      estimated_overage_cost_usd: 0.08,
    });
  });

  it('429s count toward nothing', async () => {
    const t = await app({ VIGIL_IP_LIMIT: '40' });
    const { secret } = await t.account('free');
    for (let i = 0; i < 30; i++) {
      expect((await send(t, secret)).statusCode).toBe(202);
      t.clock.advance(300);
    }
    for (let i = 0; i < 10; i++) expect((await send(t, secret)).statusCode).toBe(429); // per key
    expect((await send(t, secret)).statusCode).toBe(429); // per address (40 reached)
    expect(await usage(t, secret)).toMatchObject({ used: 30, dropped: 0 });
  });
});

const redis = await connectTestRedis('http-limits');

describeWithRedis('two instances sharing Redis (VIGIL_REDIS_URL) behave as one', redis, ({ prefix }) => {
  /** Two apps on one store and one Redis, each with its own in-process state (built once). */
  let built: Promise<[TestApp, TestApp]> | undefined;
  async function pair(): Promise<[TestApp, TestApp]> {
    built ??= (async () => {
      const env = { VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: prefix, VIGIL_IP_LIMITS: '10.255.0.0/16=10' };
      const a = await app(env);
      const b = await testApp(env, { store: a.services.store, clock: a.clock });
      // b shares a's store: close b's app and Redis client only, leave the store to a.
      extraClosers.push(() => b.vigil.close());
      for (const t of [a, b]) for (let i = 0; i < 400 && t.services.redisHealth?.degraded !== false; i++) await new Promise((r) => setTimeout(r, 5));
      return [a, b];
    })();
    const [a, b] = await built;
    T0 += 600_000;
    T0s = T0 / 1000;
    a.clock.set(T0);
    return [a, b];
  }
  const uniqueIp = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

  it("a key's RPM and per-second windows hold across instances", async () => {
    const [a, b] = await pair();
    const { secret } = await a.account('free');
    const ip = uniqueIp();
    for (let i = 0; i < 30; i++) {
      const res = await send(i % 2 === 0 ? a : b, secret, { ip });
      expect(res.statusCode).toBe(202);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(29 - i));
      a.clock.advance(300);
    }
    expectRateLimited(await send(a, secret, { ip }), Math.ceil((T0 + 61_000 - a.clock.now()) / 1000), 30);
    expect((await send(b, secret, { ip })).statusCode).toBe(429);
    expect(await usage(b, secret)).toMatchObject({ used: 30 });
  });

  it('the per-IP cap holds across instances', async () => {
    const [a, b] = await pair();
    const { secret } = await a.account('pro');
    const ip = `10.255.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`; // capped at 10 per minute
    for (let i = 0; i < 10; i++) expect((await send(i % 2 === 0 ? a : b, secret, { ip })).statusCode).toBe(202);
    expect((await send(a, secret, { ip })).statusCode).toBe(429);
    expect((await send(b, secret, { ip })).statusCode).toBe(429);
  });

  it('the Free monthly cap is shared: one instance drops what the other filled', async () => {
    const [a, b] = await pair();
    const { id, secret } = await a.account('free');
    await a.services.store.commit({
      events: [],
      alerts: [],
      idempotency: [],
      usage: [{ accountId: id, period: '2026-01', day: '2026-01-01', used: 2_498, dropped: 0 }],
    });
    const ip = uniqueIp();
    expect((await send(a, secret, { ip })).json().status).toBe('accepted');
    expect((await send(b, secret, { ip })).json().status).toBe('accepted');
    expect((await send(a, secret, { ip })).json()).toEqual({ status: 'dropped' });
    expect((await send(b, secret, { ip })).json()).toEqual({ status: 'dropped' });
    expect(await usage(a, secret)).toMatchObject({ used: 2_500, dropped: 2 });
  });
});
