/**
 * Hardening against an attacker's-eye probe, through the whole HTTP lifecycle (Fastify inject,
 * or a real port where the request line itself is the attack). Runs in both projects: embedded
 * (SQLite, memory limiter) and scale-out (PostgreSQL, Redis).
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig, ConfigError } from '../../src/config/config.js';
import { MemoryStateStore, bytesForHeap } from '../../src/detection/state/memory-state-store.js';
import { startMetricsListener } from '../../src/http/metrics-listener.js';
import { ADMIN_TOKEN, SCALE_OUT, bearer, testApp, type TestApp } from '../helpers/app.js';
import { expectError, getJson, postEvent } from './support.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});
async function app(env: Record<string, string> = {}, options: Parameters<typeof testApp>[1] = {}): Promise<TestApp> {
  const t = await testApp(env, options);
  closers.push(() => t.close());
  return t;
}

const ok = { event: 'auth.login.failure', actor_id: 'alice', ip: '203.0.113.7' };

/** One raw HTTP/1.1 exchange on a fresh socket; resolves with everything the server sent before closing. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(text);
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

function parseRaw(text: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

async function listening(t: TestApp): Promise<number> {
  await t.vigil.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.vigil.app.server.address() as AddressInfo).port;
}

describe('1. rejected requests are metered and cheap to refuse', () => {
  it('every authenticated ingestion request counts in the per-second window, whatever its answer', async () => {
    const t = await app();
    // Free: 5 requests per second; the clock stands still.
    const { secret } = await t.account('free');
    const invalid = await postEvent(t, secret, { event: 'Not A Type' });
    expectError(invalid, 400, 'INVALID_EVENT');
    expect(invalid.headers['x-ratelimit-limit']).toBe('30');
    expectError(
      await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: { ...bearer(secret), 'content-type': 'application/json' }, payload: '{' }),
      400,
      'INVALID_JSON',
    );
    expectError(
      await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: { ...bearer(secret), 'content-type': 'text/plain' }, payload: 'x' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(await postEvent(t, secret, { events: [ok] }, '/v1/events/batch'), 403, 'PLAN_UPGRADE_REQUIRED');
    expect((await postEvent(t, secret, ok)).statusCode).toBe(202);
    // Five requests this second, four of them refused: the sixth is over the window, valid or not.
    const over = expectError(await postEvent(t, secret, ok), 429, 'RATE_LIMITED');
    expect(Number(over.retry_after)).toBeGreaterThanOrEqual(1);
    expectError(await postEvent(t, secret, { event: 'Not A Type' }), 429, 'RATE_LIMITED');
    // Rejected requests took nothing from the per-minute window or the quota: one event counted.
    t.clock.advance(2_000);
    const next = await postEvent(t, secret, ok);
    expect(next.statusCode).toBe(202);
    expect(next.headers['x-ratelimit-remaining']).toBe('28');
  });

  it('the probe batch (100 events, a 9.9 KB string in metadata.extra, an unknown field) is refused by field', async () => {
    const t = await app();
    const { secret } = await t.account('pro');
    const events = Array.from({ length: 100 }, () => ({ ...ok, metadata: { extra: 'x'.repeat(9_900) }, unknown_field: 1 }));
    const body = expectError(await postEvent(t, secret, { events }, '/v1/events/batch'), 400, 'INVALID_EVENT');
    expect(body.details).toHaveLength(100);
    expect(body.details?.[0]).toMatchObject({ index: 0, field: 'metadata.extra' });
  });

  it('at most 100 unknown fields per event, counted before any is copied', async () => {
    const t = await app();
    const { secret } = await t.account('pro');
    const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]));
    const accepted = await postEvent(t, secret, { ...ok, ...fields(100) });
    expect(accepted.statusCode).toBe(202);
    const stored = await getJson(t, secret, `/v1/events/${accepted.json().id}`);
    expect(Object.keys(stored.json().metadata.extra)).toHaveLength(100);
    const refused = expectError(await postEvent(t, secret, { ...ok, ...fields(1_000) }), 400, 'INVALID_EVENT');
    expect(refused.message).toMatch(/at most 100 unknown fields/);
  });
});

describe('2. the per-address cap decides on the routed path', () => {
  it('percent-encoded and absolute-form targets count like /v1/ ones', async () => {
    const t = await app({ VIGIL_IP_LIMIT: '3' });
    const { secret } = await t.account('pro');
    const from = (url: string, method: 'GET' | 'POST' = 'GET') =>
      t.vigil.app.inject({ method, url, headers: bearer(secret), remoteAddress: '198.51.100.9', ...(method === 'POST' ? { payload: ok } : {}) });
    expect((await from('/%761/usage')).statusCode).toBe(200);
    expect((await from('/%761/events', 'POST')).statusCode).toBe(202);
    expect((await from('/v1/usage')).statusCode).toBe(200);
    expectError(await from('/%761/usage'), 429, 'RATE_LIMITED');
    expectError(await from('/%761/events', 'POST'), 429, 'RATE_LIMITED');
    // Wrong keys are capped the same way.
    const guess = await t.vigil.app.inject({ method: 'GET', url: '/%76%31/usage', headers: bearer('vgl_sk_' + 'A'.repeat(32)), remoteAddress: '198.51.100.9' });
    expectError(guess, 429, 'RATE_LIMITED');

    // The request line `GET http://host/v1/usage HTTP/1.1` from 127.0.0.1, over its cap of 3.
    const port = await listening(t);
    const request = `GET http://127.0.0.1:${port}/v1/usage HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nConnection: close\r\n\r\n`;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(parseRaw(await rawRequest(port, request)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe('3. failed admin authentication is throttled, logged and counted', () => {
  it('10 failures per source a minute answer 401 and are logged; further wrong tokens 429; the right token is never refused', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const t = await app({}, { logger });
    const admin = (token: string, remoteAddress = '198.51.100.20') =>
      t.vigil.app.inject({ method: 'GET', url: '/admin/accounts', headers: bearer(token), remoteAddress });
    for (let i = 0; i < 10; i++) expectError(await admin(`wrong-token-${i}-0123456789`), 401, 'UNAUTHORIZED');
    const throttled = expectError(await admin('wrong-token-10-0123456789'), 429, 'RATE_LIMITED');
    expect(Number(throttled.retry_after)).toBeGreaterThanOrEqual(1);
    // The right token is checked first: it is answered from the throttled address and from any other.
    expect((await admin(ADMIN_TOKEN)).statusCode).toBe(200);
    expect((await admin(ADMIN_TOKEN, '198.51.100.21')).statusCode).toBe(200);
    expect(lines.filter((line) => line.includes('admin authentication failed'))).toHaveLength(10);
    expect(lines.join('')).not.toContain('wrong-token-');
    const metrics = (await t.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/vigil_admin_auth_failures_total\{outcome="wrong_token"\} 10/);
    expect(metrics).toMatch(/vigil_admin_auth_failures_total\{outcome="throttled"\} 1/);

    t.clock.advance(61_000);
    expectError(await admin('wrong-token-11-0123456789'), 401, 'UNAUTHORIZED');
    // 100 failures from ten addresses throttle those ten only; nobody's right token is refused.
    for (let a = 0; a < 10; a++) for (let i = 0; i < 10; i++) await admin('wrong-token-0123456789', `203.0.113.${a}`);
    expectError(await admin('wrong-token-0123456789', '203.0.113.0'), 429, 'RATE_LIMITED');
    expectError(await admin('wrong-token-0123456789', '192.0.2.77'), 401, 'UNAUTHORIZED');
    expect((await admin(ADMIN_TOKEN, '192.0.2.77')).statusCode).toBe(200);
    expect((await admin(ADMIN_TOKEN, '203.0.113.0')).statusCode).toBe(200);
  });
});

describe('4. plan names are looked up among the plans only', () => {
  it.each(['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'])('plan "%s" is unknown (400) on create and change', async (plan) => {
    const t = await app();
    const headers = bearer(ADMIN_TOKEN);
    expectError(await t.vigil.app.inject({ method: 'POST', url: '/admin/accounts', headers, payload: { name: 'x', plan } }), 400, 'INVALID_REQUEST');
    const { id } = await t.account('pro');
    expectError(await t.vigil.app.inject({ method: 'PATCH', url: `/admin/accounts/${id}`, headers, payload: { plan } }), 400, 'INVALID_REQUEST');
    expect(await t.services.store.accounts.countAccounts()).toBe(1);
  });

  it('an account stored with an inherited name as its plan gets the Free plan, not no limits', async () => {
    const t = await app();
    const account = await t.services.store.accounts.createAccount({ id: 'acc_inherited', name: 'x', plan: 'constructor', createdAt: t.clock.now() });
    const key = await t.vigil.accounts.createKey(account.id, 'secret');
    if (!key.ok) throw new Error(key.message);
    const res = await postEvent(t, key.value.key, ok);
    expect(res.statusCode).toBe(202);
    expect(res.headers['x-ratelimit-limit']).toBe('30');
    expectError(await postEvent(t, key.value.key, { events: [ok] }, '/v1/events/batch'), 403, 'PLAN_UPGRADE_REQUIRED');
  });

  it('VIGIL_INITIAL_PLAN must name a plan of the table', () => {
    for (const plan of ['constructor', 'toString', '__proto__']) expect(() => loadConfig({ VIGIL_INITIAL_PLAN: plan })).toThrow(ConfigError);
  });
});

describe('5. since and until are parsed strictly', () => {
  it.each(['99999999999999999999', '9223372036854775808', '8640000000000001', '1e3', '2026-01-01T00:00:00Z trailing', '+275760-09-13'])(
    '%s answers 400',
    async (value) => {
      const t = await app();
      const { secret } = await t.account('pro');
      for (const url of [`/v1/events?since=${value}`, `/v1/events?until=${value}`, `/v1/alerts?since=${value}`]) {
        expectError(await getJson(t, secret, url.replace(/ /g, '%20').replace(/\+/g, '%2B')), 400, 'INVALID_REQUEST');
      }
    },
  );

  it('ISO dates and Unix milliseconds still work', async () => {
    const t = await app();
    const { secret } = await t.account('pro');
    expect((await getJson(t, secret, `/v1/events?since=0&until=${8.64e15}`)).statusCode).toBe(200);
    expect((await getJson(t, secret, '/v1/events?since=2026-01-01&until=2026-01-31T00:00:00Z')).statusCode).toBe(200);
  });
});

describe('6. NUL characters answer 400 on every route', () => {
  it('account names, origins and query parameters', async () => {
    const t = await app();
    const headers = bearer(ADMIN_TOKEN);
    const created = expectError(
      await t.vigil.app.inject({ method: 'POST', url: '/admin/accounts', headers, payload: { name: 'a\u0000b', plan: 'pro' } }),
      400,
      'INVALID_REQUEST',
    );
    expect(created.details?.[0]?.field).toBe('body.name');
    const { id, secret } = await t.account('pro');
    expectError(
      await t.vigil.app.inject({
        method: 'POST',
        url: `/admin/accounts/${id}/keys`,
        headers,
        payload: { kind: 'publishable', allowed_origins: ['https://a\u0000'] },
      }),
      400,
      'INVALID_REQUEST',
    );
    for (const query of ['actor_id=%00', 'type=a%00', 'tag=x%00y', 'ip=%00'])
      expectError(await getJson(t, secret, `/v1/events?${query}`), 400, 'INVALID_REQUEST');
    expectError(await getJson(t, secret, '/v1/events/evt_%00'), 400, 'INVALID_REQUEST');
    expect(await t.services.store.accounts.countAccounts()).toBe(1);
  });
});

describe('7. metadata.extra is never spread character by character', () => {
  it('a string or array extra beside unknown fields is refused; an object extra is merged', async () => {
    const t = await app();
    const { secret } = await t.account('pro');
    for (const extra of ['st', ['a', 'b'], 7, null]) {
      const body = expectError(await postEvent(t, secret, { ...ok, metadata: { extra }, unknown_field: 1 }), 400, 'INVALID_EVENT');
      expect(body.details?.[0]?.field).toBe('metadata.extra');
    }
    const merged = await postEvent(t, secret, { ...ok, metadata: { extra: { kept: true } }, unknown_field: 1 });
    expect(merged.statusCode).toBe(202);
    expect((await getJson(t, secret, `/v1/events/${merged.json().id}`)).json().metadata).toEqual({ extra: { kept: true, unknown_field: 1 } });
    // Without unknown fields, extra is ordinary metadata.
    const plain = await postEvent(t, secret, { ...ok, metadata: { extra: 'st' } });
    expect((await getJson(t, secret, `/v1/events/${plain.json().id}`)).json().metadata).toEqual({ extra: 'st' });
  });
});

describe('8. error bodies are bounded', () => {
  it('80,000 unknown batch keys: the first 100 details and a count', async () => {
    const t = await app();
    const { secret } = await t.account('pro');
    const payload = JSON.stringify({ events: [ok], ...Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, 1])) });
    const res = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/events/batch',
      headers: { ...bearer(secret), 'content-type': 'application/json' },
      payload,
    });
    const body = expectError(res, 400, 'INVALID_EVENT');
    expect(body.details).toHaveLength(100);
    expect(body.details_total).toBe(80_000);
    expect(res.rawPayload.length).toBeLessThan(16_000);
  });

  it('a batch of events with every field wrong: at most 100 details', async () => {
    const t = await app();
    const { secret } = await t.account('pro');
    const bad = { event: 'Bad', actor_id: 1, ip: 'x', session_id: 1, host: 1, user_agent: 1, request: 1 };
    const body = expectError(await postEvent(t, secret, { events: Array.from({ length: 100 }, () => bad) }, '/v1/events/batch'), 400, 'INVALID_EVENT');
    expect(body.details).toHaveLength(100);
    expect(body.details_total).toBeGreaterThan(100);
  });
});

describe('9. the unauthenticated surface', () => {
  it('/readyz names no path and no version', async () => {
    const t = await app();
    const res = await t.vigil.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['overloaded', 'redis', 'status', 'storage']);
    expect(res.body).not.toMatch(/\/|version|\.mmdb|\.csv/i);
  });

  it('VIGIL_METRICS_TOKEN protects /metrics', async () => {
    const token = 'metrics-token-0123456789';
    const t = await app({ VIGIL_METRICS_TOKEN: token });
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/metrics' }), 401, 'UNAUTHORIZED');
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/metrics', headers: bearer('wrong-metrics-token-0123') }), 401, 'UNAUTHORIZED');
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/metrics', headers: bearer(ADMIN_TOKEN) }), 401, 'UNAUTHORIZED');
    const res = await t.vigil.app.inject({ method: 'GET', url: '/metrics', headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('vigil_http_requests_total');
  });

  it('VIGIL_METRICS_PORT moves /metrics to a listener of its own', async () => {
    const token = 'metrics-token-0123456789';
    const t = await app({ VIGIL_METRICS_PORT: '9464', VIGIL_METRICS_TOKEN: token });
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/metrics', headers: bearer(token) }), 404, 'NOT_FOUND');
    const server = await startMetricsListener(t.vigil.metrics, { host: '127.0.0.1', port: 0, token });
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const refused = await fetch(`${base}/metrics`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe('UNAUTHORIZED');
    expect(refused.headers.get('x-request-id')).toMatch(/^req_/);
    const served = await fetch(`${base}/metrics`, { headers: bearer(token) });
    expect(served.status).toBe(200);
    expect(await served.text()).toContain('vigil_http_requests_total');
    expect((await fetch(`${base}/v1/usage`)).status).toBe(404);
  });

  it('probes, /metrics and /docs are capped per address in a window of their own', async () => {
    const t = await app({ VIGIL_IP_LIMIT: '4' });
    const { secret } = await t.account('pro');
    const from = (url: string, headers: Record<string, string> = {}) => t.vigil.app.inject({ method: 'GET', url, headers, remoteAddress: '198.51.100.30' });
    const statuses = [];
    for (const url of ['/healthz', '/readyz', '/metrics', '/docs', '/healthz', '/docs/static/index.html', '/nowhere'])
      statuses.push((await from(url)).statusCode);
    expect(statuses.slice(0, 4).every((s) => s < 400 || s === 404)).toBe(true);
    expect(statuses.slice(4)).toEqual([429, 429, 429]);
    // The /v1 window is its own: the address can still use the API.
    expect((await from('/v1/usage', bearer(secret))).statusCode).toBe(200);
  });
});

describe('10. answers Node gives before any route', () => {
  it.each([
    [
      'oversized headers',
      (port: number) => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    ['a bare CR inside a header value', (port: number) => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Bad: a\rb\r\n\r\n`, 400, 'INVALID_REQUEST'],
    ['a malformed request line', () => `GET /healthz HTTP/9 9\r\n\r\n`, 400, 'INVALID_REQUEST'],
  ] as const)('%s: the documented error body with X-Request-Id', async (_name, request, status, code) => {
    const t = await app();
    const port = await listening(t);
    const res = parseRaw(await rawRequest(port, request(port)));
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body.error).toBe(code);
    expect(typeof body.message).toBe('string');
    expect(body.request_id).toMatch(/^req_/);
    expect(res.headers['x-request-id']).toBe(body.request_id);
  });
});

describe('11. authentication answers do not tell more than needed', () => {
  it('a revoked key answers exactly like an unknown one', async () => {
    const t = await app();
    const { id, secret } = await t.account('pro');
    const unknown = expectError(await postEvent(t, 'vgl_sk_' + 'Z'.repeat(32), ok), 401, 'UNAUTHORIZED');
    const keys = await t.services.store.accounts.listKeys(id);
    await t.vigil.app.inject({ method: 'DELETE', url: `/admin/keys/${keys.find((k) => k.kind === 'secret')?.id}`, headers: bearer(ADMIN_TOKEN) });
    const revoked = expectError(await postEvent(t, secret, ok), 401, 'UNAUTHORIZED');
    expect(revoked.message).toBe(unknown.message);
  });

  it('two different keys in Authorization and X-API-Key are refused; the same key twice is fine', async () => {
    const t = await app();
    const a = await t.account('pro');
    const b = await t.account('pro');
    const both = await postEvent(t, a.secret, ok, '/v1/events', { 'x-api-key': b.secret });
    expect(expectError(both, 401, 'UNAUTHORIZED').message).toMatch(/two different keys/i);
    expect((await postEvent(t, a.secret, ok, '/v1/events', { 'x-api-key': a.secret })).statusCode).toBe(202);
  });

  it('the admin token is accepted only as Authorization: Bearer', async () => {
    const t = await app();
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/admin/accounts', headers: { 'x-api-key': ADMIN_TOKEN } }), 401, 'UNAUTHORIZED');
    expect((await t.vigil.app.inject({ method: 'GET', url: '/admin/accounts', headers: bearer(ADMIN_TOKEN) })).statusCode).toBe(200);
  });
});

describe.skipIf(SCALE_OUT)('12. detection state per distinct actor stays under its record bound', () => {
  it('3,000 distinct actors through HTTP into a store bounded at 1,000 records', async () => {
    const base = await app();
    const state = new MemoryStateStore({ clock: base.clock, maxRecords: 1_000 });
    closers.push(() => state.close());
    const vigil = await buildApp({ ...base.services, state });
    closers.push(() => vigil.close());
    const account = await vigil.accounts.create('bound', 'business');
    if (!account.ok) throw new Error(account.message);
    const key = await vigil.accounts.createKey(account.value.id, 'secret');
    if (!key.ok) throw new Error(key.message);
    let peak = 0;
    for (let batch = 0; batch < 30; batch++) {
      base.clock.advance(5_000);
      const events = Array.from({ length: 100 }, (_, i) => ({ ...ok, actor_id: `actor-${batch * 100 + i}`, ip: `198.51.${batch}.${i + 1}` }));
      const res = await vigil.app.inject({ method: 'POST', url: '/v1/events/batch', headers: bearer(key.value.key), payload: { events } });
      expect(res.statusCode).toBe(202);
      peak = Math.max(peak, state.size);
    }
    expect(peak).toBeGreaterThan(900);
    expect(peak).toBeLessThanOrEqual(1_000);
    // The shipped heap limit (688 MB) keeps about 229 MB of estimated state, as docs/guides/deployment.md says.
    expect(bytesForHeap(688 * 1024 * 1024)).toBe(240_473_429);
  });
});
