import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffMs, JITTER, RETRY_WINDOW_MS } from '../../src/webhooks/dispatcher.js';
import { verifySignature } from '../../src/webhooks/signing.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectError, postEvent, roomyApp } from './support.js';

const HOUR = 3_600_000;

/** Loopback receivers are allowed by this test configuration only. */
const ENV = { VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_WEBHOOK_POLL_MS: '20', VIGIL_WEBHOOK_TIMEOUT_MS: '3000' };

type Json = any;

async function call(t: TestApp, key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse> {
  return t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function createHook(t: TestApp, key: string, body: Record<string, unknown>): Promise<Json> {
  const res = await call(t, key, 'POST', '/v1/webhooks', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function deliveries(t: TestApp, key: string, hookId: string): Promise<Json[]> {
  const res = await call(t, key, 'GET', `/v1/webhooks/${hookId}/deliveries?limit=500`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** Opens one auth.mfa_disabled alert (high) for the actor. */
async function openAlert(t: TestApp, key: string, actor: string): Promise<void> {
  const res = await postEvent(t, key, { event: 'auth.mfa.disabled', actor_id: actor, ip: '198.51.100.7', timestamp: t.clock.now() });
  expect(res.statusCode, res.body).toBe(202);
}

/** Waits (without a time assertion) until the receiver holds n requests. */
const received = (r: WebhookReceiver, n: number) => vi.waitFor(() => expect(r.received.length).toBeGreaterThanOrEqual(n), { timeout: 15_000, interval: 10 });

/** Waits until every delivery of the endpoint has left the given status. */
async function settled(t: TestApp, key: string, hookId: string, check: (list: Json[]) => boolean): Promise<Json[]> {
  let list: Json[] = [];
  await vi.waitFor(
    async () => {
      list = await deliveries(t, key, hookId);
      expect(check(list)).toBe(true);
    },
    { timeout: 15_000, interval: 20 },
  );
  return list;
}

describe('webhooks: endpoints API', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    t = await roomyApp({ ...ENV, VIGIL_WEBHOOK_MAX_ENDPOINTS: '3' });
    acct = await t.account('pro');
  });
  afterAll(() => t.close());

  it('creates, shows the secret once, lists, patches and deletes; other accounts see 404', async () => {
    const created = await createHook(t, acct.secret, {
      url: 'http://127.0.0.1:9/hook',
      format: 'ocsf',
      filters: { min_severity: 'high', alert_types: ['auth.*'] },
    });
    expect(created.id).toMatch(/^whk_/);
    expect(created.secret).toMatch(/^whsec_/);
    expect(created).toMatchObject({ format: 'ocsf', enabled: true, filters: { min_severity: 'high', alert_types: ['auth.*'], kill_chains_only: false } });
    const got = await call(t, acct.secret, 'GET', `/v1/webhooks/${created.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().secret).toBeUndefined();
    expect((await call(t, acct.secret, 'GET', '/v1/webhooks')).json().data.map((e: Json) => e.id)).toEqual([created.id]);

    const patched = await call(t, acct.secret, 'PATCH', `/v1/webhooks/${created.id}`, { format: 'slack', filters: { kill_chains_only: true }, enabled: false });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ format: 'slack', enabled: false, filters: { min_severity: 'high', kill_chains_only: true } });

    const other = await t.account('pro');
    for (const [method, url] of [
      ['GET', `/v1/webhooks/${created.id}`],
      ['PATCH', `/v1/webhooks/${created.id}`],
      ['DELETE', `/v1/webhooks/${created.id}`],
      ['GET', `/v1/webhooks/${created.id}/deliveries`],
      ['POST', `/v1/webhooks/${created.id}/test`],
      ['POST', `/v1/webhooks/${created.id}/rotate-secret`],
    ] as const)
      expectError(await call(t, other.secret, method, url, method === 'GET' || method === 'DELETE' ? undefined : {}), 404, 'NOT_FOUND');
    expect((await call(t, other.secret, 'GET', '/v1/webhooks')).json().data).toEqual([]);

    expect((await call(t, acct.secret, 'DELETE', `/v1/webhooks/${created.id}`)).statusCode).toBe(204);
    expectError(await call(t, acct.secret, 'GET', `/v1/webhooks/${created.id}`), 404, 'NOT_FOUND');
  });

  it('a deliveries page size no range holds (limit=1e400) is 400 naming limit', async () => {
    const owner = await t.account('pro');
    const hook = await createHook(t, owner.secret, { url: 'http://127.0.0.1:9/hook' });
    const body = expectError(await call(t, owner.secret, 'GET', `/v1/webhooks/${hook.id}/deliveries?limit=1e400`), 400, 'INVALID_REQUEST');
    expect(body.details).toEqual([{ field: 'limit', message: 'limit must be an integer from 1 to 500' }]);
  });

  it('needs a secret key', async () => {
    expectError(await call(t, acct.publishable, 'GET', '/v1/webhooks'), 403, 'FORBIDDEN');
  });

  it('refuses endpoints beyond the per-account limit', async () => {
    const fresh = await t.account('pro');
    for (let i = 0; i < 3; i++) await createHook(t, fresh.secret, { url: `http://127.0.0.1:9/hook${i}` });
    expectError(await call(t, fresh.secret, 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/one-more' }), 403, 'FORBIDDEN');
  });

  it('validates the body', async () => {
    expectError(await call(t, acct.secret, 'POST', '/v1/webhooks', { url: 'ftp://127.0.0.1/x' }), 400, 'INVALID_REQUEST');
    expectError(await call(t, acct.secret, 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/', format: 'xml' }), 400, 'INVALID_REQUEST');
    expectError(
      await call(t, acct.secret, 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/', filters: { min_severity: 'urgent' } }),
      400,
      'INVALID_REQUEST',
    );
    expectError(await call(t, acct.secret, 'POST', '/v1/webhooks', { url: 'http://user:pw@127.0.0.1:9/' }), 400, 'INVALID_REQUEST');
  });
});

describe('webhooks: server-side request forgery', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    t = await roomyApp({ VIGIL_WEBHOOK_POLL_MS: '20' });
    acct = await t.account('pro');
  });
  afterAll(() => t.close());

  it.each([
    ['loopback', 'http://127.0.0.1/hook'],
    ['loopback (other address)', 'http://127.9.9.9/hook'],
    ['loopback IPv6', 'http://[::1]/hook'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook'],
    ['private 10/8', 'http://10.0.0.5/hook'],
    ['private 172.16/12', 'http://172.16.3.4/hook'],
    ['private 192.168/16', 'https://192.168.1.1/hook'],
    ['unique local IPv6', 'http://[fd12:3456::1]/hook'],
    ['carrier-grade NAT', 'http://100.64.0.1/hook'],
    ['link-local', 'http://169.254.10.10/hook'],
    ['link-local IPv6', 'http://[fe80::1]/hook'],
    ['metadata (AWS, GCP, Azure)', 'http://169.254.169.254/latest/meta-data/'],
    ['metadata (AWS IPv6)', 'http://[fd00:ec2::254]/'],
    ['metadata (Alibaba)', 'http://100.100.100.200/'],
    ['unspecified', 'http://0.0.0.0/hook'],
    ['a host name that resolves to loopback', 'http://localhost:8080/hook'],
    ['IPv4-compatible loopback', 'http://[::127.0.0.1]/'],
    ['IPv4-compatible loopback (hexadecimal)', 'http://[::7f00:1]:8080/hook'],
    ['IPv4-compatible metadata', 'http://[::169.254.169.254]/latest/meta-data/'],
    ['IPv4-translated loopback', 'http://[::ffff:0:127.0.0.1]/hook'],
    ['NAT64 private', 'http://[64:ff9b::10.0.0.5]/hook'],
    ['local-use NAT64 loopback', 'http://[64:ff9b:1::7f00:1]/hook'],
    ['6to4 loopback', 'http://[2002:7f00:1::1]/hook'],
    ['6to4 private', 'http://[2002:c0a8:101::1]/hook'],
    ['Teredo loopback', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook'],
  ])('refuses %s: %s', async (_name, url) => {
    const body = expectError(await call(t, acct.secret, 'POST', '/v1/webhooks', { url }), 400, 'INVALID_REQUEST');
    expect(body.message).toMatch(/refused/);
    expect(body.details?.[0]?.field).toBe('url');
  });

  it('refuses a loopback URL given by PATCH too', async () => {
    const hook = await createHook(t, acct.secret, { url: 'https://93.184.215.14/hook' });
    expectError(await call(t, acct.secret, 'PATCH', `/v1/webhooks/${hook.id}`, { url: 'http://127.0.0.1/x' }), 400, 'INVALID_REQUEST');
    for (const url of ['http://[::127.0.0.1]/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::1]/']) {
      const body = expectError(await call(t, acct.secret, 'PATCH', `/v1/webhooks/${hook.id}`, { url }), 400, 'INVALID_REQUEST');
      expect(body.message).toMatch(/embedding 127\.0\.0\.1, a loopback address; such addresses are refused/);
      expect(body.details?.[0]?.field).toBe('url');
    }
    expect((await call(t, acct.secret, 'GET', `/v1/webhooks/${hook.id}`)).json().url).toBe('https://93.184.215.14/hook');
  });

  it('an IPv6 form embedding a public IPv4 address is refused like any other; an IPv4-mapped one is that public address', async () => {
    for (const url of ['http://[::93.184.215.14]/hook', 'http://[64:ff9b::93.184.215.14]/hook', 'http://[2002:5db8:d70e::1]/hook']) {
      const body = expectError(await call(t, acct.secret, 'POST', '/v1/webhooks', { url }), 400, 'INVALID_REQUEST');
      expect(body.message).toMatch(/reserved address .* embedding 93\.184\.215\.14; such addresses are refused/);
    }
    expect((await call(t, acct.secret, 'POST', '/v1/webhooks', { url: 'http://[::ffff:93.184.215.14]/hook' })).statusCode).toBe(201);
  });
});

describe('webhooks: delivery', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  let receiver: WebhookReceiver;
  let hook: Json;

  beforeEach(async () => {
    t = await roomyApp(ENV);
    acct = await t.account('pro');
    receiver = await new WebhookReceiver().start();
    hook = await createHook(t, acct.secret, { url: receiver.url });
  });
  afterEach(async () => {
    await t.close();
    await receiver.stop();
  });

  it('delivers an opened alert once, signed, with the delivery id; another sighting sends nothing; a status change sends one', async () => {
    await openAlert(t, acct.secret, 'mallory');
    await received(receiver, 1);
    const [first] = receiver.received;
    const nowSeconds = Math.floor(t.clock.now() / 1000);
    const headers = {
      id: first?.headers['webhook-id'] as string,
      timestamp: first?.headers['webhook-timestamp'] as string,
      signature: first?.headers['webhook-signature'] as string,
    };
    expect(verifySignature(hook.secret, headers, first?.body ?? '', nowSeconds)).toEqual({ ok: true });
    expect(verifySignature(hook.secret, headers, `${first?.body} `, nowSeconds)).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifySignature(hook.secret, headers, first?.body ?? '', nowSeconds + 301)).toEqual({ ok: false, reason: 'stale timestamp' });
    expect(verifySignature('whsec_' + Buffer.alloc(24).toString('base64'), headers, first?.body ?? '', nowSeconds)).toEqual({
      ok: false,
      reason: 'bad signature',
    });
    expect(first?.json).toMatchObject({
      id: headers.id,
      type: 'alert.opened',
      account_id: acct.id,
      data: { alert: { type: 'auth.mfa_disabled', severity: 'high', status: 'open' } },
    });
    const alertId = first?.json.data.alert.id as string;

    await openAlert(t, acct.secret, 'mallory');
    const list = await settled(t, acct.secret, hook.id, (l) => l.every((d) => d.status === 'delivered'));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: headers.id,
      event: 'alert.opened',
      alert_id: alertId,
      status: 'delivered',
      attempts: 1,
      last_answer: { status: 200, error: null },
    });

    const patched = await call(t, acct.secret, 'PATCH', `/v1/alerts/${alertId}`, { status: 'acknowledged' });
    expect(patched.statusCode).toBe(200);
    await received(receiver, 2);
    expect(receiver.received[1]?.json).toMatchObject({ type: 'alert.status_changed', data: { alert: { id: alertId, status: 'acknowledged' } } });
    // The same status again is no change.
    await call(t, acct.secret, 'PATCH', `/v1/alerts/${alertId}`, { status: 'acknowledged' });
    expect(await settled(t, acct.secret, hook.id, (l) => l.every((d) => d.status === 'delivered'))).toHaveLength(2);
  });

  it('sends only what the filters let through', async () => {
    const critical = await createHook(t, acct.secret, { url: receiver.url, filters: { min_severity: 'critical' } });
    const chains = await createHook(t, acct.secret, { url: receiver.url, filters: { kill_chains_only: true } });
    const requests = await createHook(t, acct.secret, { url: receiver.url, filters: { alert_types: ['request.*', 'data.*'] } });
    const auth = await createHook(t, acct.secret, { url: receiver.url, filters: { alert_types: ['auth.mfa_*'] } });
    await openAlert(t, acct.secret, 'eve');
    await settled(t, acct.secret, auth.id, (l) => l.length === 1 && l[0].status === 'delivered');
    await settled(t, acct.secret, hook.id, (l) => l.length === 1 && l[0].status === 'delivered');
    for (const quiet of [critical, chains, requests]) expect(await deliveries(t, acct.secret, quiet.id)).toEqual([]);
  });

  it('retries 5xx on the back-off schedule under the controlled clock, then delivers with the same id', async () => {
    receiver.respond = (_r, n) => (n <= 3 ? { status: 503, body: 'busy' } : { status: 200 });
    await openAlert(t, acct.secret, 'trudy');
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [d] = await settled(t, acct.secret, hook.id, (l) => l[0]?.attempts === attempt);
      expect(d).toMatchObject({ status: 'pending', last_answer: { status: 503, error: 'HTTP 503: busy' } });
      const wait = Date.parse(d.next_attempt_at) - Date.parse(d.last_attempt_at);
      expect(wait).toBeGreaterThanOrEqual(backoffMs(attempt) * (1 - JITTER) - 1);
      expect(wait).toBeLessThanOrEqual(backoffMs(attempt) * (1 + JITTER) + 1);
      // Not due a millisecond early.
      t.clock.set(Date.parse(d.next_attempt_at) - 1);
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.received).toHaveLength(attempt);
      t.clock.set(Date.parse(d.next_attempt_at));
      await received(receiver, attempt + 1);
    }
    const [done] = await settled(t, acct.secret, hook.id, (l) => l[0]?.status === 'delivered');
    expect(done.attempts).toBe(4);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([done.id]));
  });

  it("honours 429's Retry-After, fails other 4xx at once and does not follow redirects", async () => {
    receiver.respond = () => ({ status: 429, headers: { 'retry-after': '120' } });
    await openAlert(t, acct.secret, 'oscar');
    const [limited] = await settled(t, acct.secret, hook.id, (l) => l[0]?.attempts === 1);
    expect(Date.parse(limited.next_attempt_at) - Date.parse(limited.last_attempt_at)).toBe(120_000);

    receiver.respond = () => ({ status: 400, body: 'no' });
    t.clock.advance(120_000);
    const [rejected] = await settled(t, acct.secret, hook.id, (l) => l[0]?.status === 'failed');
    expect(rejected).toMatchObject({ attempts: 2, next_attempt_at: null, last_answer: { status: 400 } });

    receiver.respond = () => ({ status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } });
    const before = receiver.received.length;
    await openAlert(t, acct.secret, 'victor');
    const list = await settled(t, acct.secret, hook.id, (l) => l.length === 2 && l[0].status === 'failed');
    expect(list[0]).toMatchObject({ attempts: 1, last_answer: { status: 302 } });
    expect(list[0].last_answer.error).toMatch(/redirects are not followed/);
    expect(receiver.received.length).toBe(before + 1);
  });

  it('a receiver down for a while gets every delivery once it is back', async () => {
    await receiver.stop();
    const actors = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
    for (const actor of actors) await openAlert(t, acct.secret, actor);
    // Each delivery is attempted against the closed port and rescheduled.
    await settled(t, acct.secret, hook.id, (l) => l.length === actors.length && l.every((d) => d.attempts >= 1 && d.status === 'pending'));
    for (let i = 0; i < 3; i++) {
      t.clock.advance(backoffMs(i + 1) * (1 + JITTER));
      await settled(t, acct.secret, hook.id, (l) => l.every((d) => d.attempts >= i + 2));
    }
    const down = await deliveries(t, acct.secret, hook.id);
    expect(down.every((d) => d.status === 'pending' && /ECONNREFUSED/.test(d.last_answer.error))).toBe(true);
    await receiver.start();
    t.clock.advance(backoffMs(4) * (1 + JITTER));
    const list = await settled(t, acct.secret, hook.id, (l) => l.every((d) => d.status === 'delivered'));
    const byId = receiver.byId();
    expect(byId.size).toBe(actors.length);
    expect([...byId.values()].every((r) => r.length === 1)).toBe(true);
    expect(new Set(byId.keys())).toEqual(new Set(list.map((d) => d.id)));
    const attempts = list.map((d) => d.attempts as number);
    console.log(
      `receiver down: ${actors.length} deliveries, ${receiver.received.length} requests received once back, attempts per delivery ${Math.min(...attempts)}-${Math.max(...attempts)}`,
    );
  });

  it('gives up after 24 hours, fails the delivery and disables the endpoint with the reason', async () => {
    receiver.respond = () => ({ status: 500 });
    await openAlert(t, acct.secret, 'zed');
    const start = t.clock.now();
    let attempts = 0;
    while (true) {
      const [d] = await settled(t, acct.secret, hook.id, (l) => l[0]?.attempts > attempts);
      attempts = d.attempts;
      if (d.status !== 'pending') break;
      expect(Date.parse(d.next_attempt_at)).toBeLessThanOrEqual(start + RETRY_WINDOW_MS);
      t.clock.set(Date.parse(d.next_attempt_at));
    }
    const [last] = await deliveries(t, acct.secret, hook.id);
    expect(last).toMatchObject({ status: 'failed', last_answer: { status: 500 } });
    expect(Date.parse(last.last_attempt_at)).toBe(start + RETRY_WINDOW_MS);
    expect(receiver.received).toHaveLength(attempts);
    console.log(`always 500: failed after ${attempts} attempts over ${(Date.parse(last.last_attempt_at) - start) / HOUR} h`);
    const endpoint = (await call(t, acct.secret, 'GET', `/v1/webhooks/${hook.id}`)).json();
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabled_reason).toMatch(/failed for 24 hours.*HTTP 500/);
    // A disabled endpoint gets no new deliveries; enabling clears the reason.
    await openAlert(t, acct.secret, 'zed-2');
    expect(await deliveries(t, acct.secret, hook.id)).toHaveLength(1);
    const enabled = (await call(t, acct.secret, 'PATCH', `/v1/webhooks/${hook.id}`, { enabled: true })).json();
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  });

  it('sends a test delivery at once and reports its outcome', async () => {
    const res = await call(t, acct.secret, 'POST', `/v1/webhooks/${hook.id}/test`, {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ event: 'webhook.test', status: 'delivered', attempts: 1, alert_id: null });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.json).toMatchObject({ id: res.json().id, type: 'webhook.test' });
    // A failing test is tried once and reported, not retried.
    receiver.respond = () => ({ status: 500 });
    const failing = await call(t, acct.secret, 'POST', `/v1/webhooks/${hook.id}/test`);
    expect(failing.json()).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: null, last_answer: { status: 500 } });
    expect((await call(t, acct.secret, 'GET', `/v1/webhooks/${hook.id}`)).json().failing_since).toBeNull();
  });

  it('sends a test delivery itself even when a poller looks for due deliveries right after it was stored', async () => {
    const store = t.services.store.webhooks;
    const insert = store.insertDelivery.bind(store);
    let polled = -1;
    vi.spyOn(store, 'insertDelivery').mockImplementation(async (row) => {
      await insert(row);
      // A poller of this instance or of another one, between the insert and the attempt.
      polled = (await t.services.webhookDispatcher?.runOnce()) ?? -1;
    });
    const res = await call(t, acct.secret, 'POST', `/v1/webhooks/${hook.id}/test`, {});
    expect(polled).toBe(0);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ event: 'webhook.test', status: 'delivered', attempts: 1 });
    expect(receiver.received).toHaveLength(1);
  });

  it('signs with the old and the new secret during a rotation overlap, then with the new one only', async () => {
    const defaultOverlap = await call(t, acct.secret, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`);
    expect(defaultOverlap.json().previous_secret_expires_at).toBe(new Date(t.clock.now() + 24 * HOUR).toISOString());
    hook.secret = defaultOverlap.json().secret;
    const rotated = await call(t, acct.secret, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`, { overlap_hours: 2 });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const fresh = rotated.json().secret as string;
    expect(fresh).not.toBe(hook.secret);
    expect(rotated.json().previous_secret_expires_at).toBe(new Date(t.clock.now() + 2 * HOUR).toISOString());
    await call(t, acct.secret, 'POST', `/v1/webhooks/${hook.id}/test`, {});
    const during = receiver.received[0];
    const h = (r: typeof during) => ({
      id: r?.headers['webhook-id'] as string,
      timestamp: r?.headers['webhook-timestamp'] as string,
      signature: r?.headers['webhook-signature'] as string,
    });
    const now = () => Math.floor(t.clock.now() / 1000);
    expect(h(during).signature.split(' ')).toHaveLength(2);
    expect(verifySignature(hook.secret, h(during), during?.body ?? '', now())).toEqual({ ok: true });
    expect(verifySignature(fresh, h(during), during?.body ?? '', now())).toEqual({ ok: true });
    t.clock.advance(2 * HOUR);
    await call(t, acct.secret, 'POST', `/v1/webhooks/${hook.id}/test`, {});
    const after = receiver.received[1];
    expect(verifySignature(hook.secret, h(after), after?.body ?? '', now())).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifySignature(fresh, h(after), after?.body ?? '', now())).toEqual({ ok: true });
  });
});
