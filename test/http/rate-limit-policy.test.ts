/**
 * RateLimit-Policy and RateLimit (both of a key's windows) on the ingestion answers, and the
 * browser's User-Agent taken for publishable keys' events: the real app (embedded, or PostgreSQL
 * and Redis in the scaleout project), a manual clock, Fastify inject.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, testApp, type TestApp } from '../helpers/app.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const ORIGIN = 'https://shop.example';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

let t: TestApp;
/** Each test starts 10 minutes after the previous one, on a whole second plus 250 ms. */
let T0 = Date.UTC(2026, 2, 3, 9, 0, 0, 250);

beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

function start(): number {
  T0 += 600_000;
  t.clock.set(T0);
  return T0;
}

function post(key: string, payload: unknown, options: { batch?: boolean; headers?: Record<string, string> } = {}): Promise<LightMyRequestResponse> {
  return t.vigil.app.inject({
    method: 'POST',
    url: options.batch ? '/v1/events/batch' : '/v1/events',
    remoteAddress: '192.0.2.77',
    headers: { ...bearer(key), ...options.headers },
    payload: payload as Record<string, unknown>,
  });
}

const login = (i: number) => ({ event: 'auth.login.success', actor_id: `policy-${i}`, ip: '203.0.113.9' });

describe('RateLimit-Policy and RateLimit name both windows of the key', () => {
  it('Free: the policy on the first answer, then remaining and seconds of each window; the 429 of the per-second window says r=0', async () => {
    const now = start();
    const { secret } = await t.account('free');
    const first = await post(secret, login(0));
    expect(first.statusCode).toBe(202);
    expect(first.headers['ratelimit-policy']).toBe('"second";q=5;w=1, "minute";q=30;w=60');
    // One request and one event counted at 250 ms past the second: the request leaves the
    // per-second window at 1.3 s (its 100 ms bucket plus 1.1 s), second 2; the event leaves the
    // minute window at 61 s.
    expect(first.headers['ratelimit']).toBe('"second";r=4;t=2, "minute";r=29;t=61');
    for (let i = 1; i < 5; i++) expect((await post(secret, login(i))).statusCode).toBe(202);
    const refused = await post(secret, login(5));
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['ratelimit-policy']).toBe('"second";q=5;w=1, "minute";q=30;w=60');
    expect(refused.headers['ratelimit']).toBe('"second";r=0;t=2, "minute";r=0;t=61');
    // X-RateLimit-* are unchanged: the per-minute window only.
    expect(refused.headers['x-ratelimit-limit']).toBe('30');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Math.ceil(now / 1000) + 60));
    // 1.1 s later the per-second window is empty again; the minute window still holds five events.
    t.clock.advance(1_100);
    const after = await post(secret, login(6));
    expect(after.statusCode).toBe(202);
    expect(after.headers['ratelimit']).toBe('"second";r=4;t=2, "minute";r=24;t=60');
  });

  it('a batch takes one request of the second window and each of its events from the minute window', async () => {
    start();
    const { secret } = await t.account('starter');
    const res = await post(secret, { events: Array.from({ length: 20 }, (_, i) => login(i)) }, { batch: true });
    expect(res.statusCode).toBe(202);
    expect(res.headers['ratelimit-policy']).toBe('"second";q=25;w=1, "minute";q=500;w=60');
    expect(res.headers['ratelimit']).toBe('"second";r=24;t=2, "minute";r=480;t=61');
  });

  it('answers that take no events carry both windows too: a 400 counts one request, a 403 batch on Free as well', async () => {
    start();
    const { secret } = await t.account('free');
    const invalid = await post(secret, { nope: true });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.headers['ratelimit']).toBe('"second";r=4;t=2, "minute";r=30;t=0');
    const batch = await post(secret, { events: [login(1)] }, { batch: true });
    expect(batch.statusCode).toBe(403);
    expect(batch.headers['ratelimit-policy']).toBe('"second";q=5;w=1, "minute";q=30;w=60');
    expect(batch.headers['ratelimit']).toBe('"second";r=3;t=2, "minute";r=30;t=0');
  });

  it('an unknown key answers without a policy (no key, no key windows)', async () => {
    start();
    const res = await post('vgl_sk_not_a_key_000000000000000000', login(0));
    expect(res.statusCode).toBe(401);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    expect(res.headers['ratelimit-policy']).toBeUndefined();
    expect(res.headers['ratelimit']).toBeUndefined();
  });

  it('browsers may read both fields (CORS exposes them)', async () => {
    start();
    const { publishable } = await t.account('free', [ORIGIN]);
    const res = await post(publishable, login(0), { headers: { origin: ORIGIN } });
    expect(res.statusCode).toBe(202);
    const exposed = String(res.headers['access-control-expose-headers']).split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Remaining']));
    expect(res.headers['ratelimit-policy']).toBe('"second";q=5;w=1, "minute";q=30;w=60');
  });
});

describe("a publishable key's events take the browser's User-Agent", () => {
  async function storedUserAgent(secret: string, id: string): Promise<unknown> {
    const res = await t.vigil.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers: bearer(secret), remoteAddress: '192.0.2.78' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    return { user_agent: doc.user_agent, browser: doc.enrichment?.user_agent?.browser };
  }

  it('an event without user_agent gets the request header, and is classified from it', async () => {
    start();
    const { secret, publishable } = await t.account('pro', [ORIGIN]);
    const res = await post(publishable, { event: 'auth.login.success', actor_id: 'ua-1' }, { headers: { origin: ORIGIN, 'user-agent': CHROME } });
    expect(res.statusCode).toBe(202);
    expect(await storedUserAgent(secret, res.json().id)).toEqual({ user_agent: CHROME, browser: 'Chrome' });
  });

  it('a user_agent in the event is kept; in a batch each event without one gets the header', async () => {
    start();
    const { secret, publishable } = await t.account('pro', [ORIGIN]);
    const res = await post(
      publishable,
      {
        events: [
          { event: 'auth.login.success', actor_id: 'ua-2', user_agent: 'curl/8.5.0' },
          { event: 'auth.login.success', actor_id: 'ua-3' },
        ],
      },
      { batch: true, headers: { origin: ORIGIN, 'user-agent': CHROME } },
    );
    expect(res.statusCode).toBe(202);
    const [kept, filled] = res.json().results as { id: string }[];
    expect(await storedUserAgent(secret, (kept as { id: string }).id)).toMatchObject({ user_agent: 'curl/8.5.0' });
    expect(await storedUserAgent(secret, (filled as { id: string }).id)).toEqual({ user_agent: CHROME, browser: 'Chrome' });
  });

  it('a secret key speaks for a server: its events never take the request header', async () => {
    start();
    const { secret } = await t.account('pro');
    const res = await post(secret, { event: 'auth.login.success', actor_id: 'ua-4' }, { headers: { 'user-agent': 'vigil-node/0.2.0' } });
    expect(res.statusCode).toBe(202);
    expect(await storedUserAgent(secret, res.json().id)).toEqual({ user_agent: undefined, browser: undefined });
  });
});
