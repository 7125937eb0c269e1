import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/storage/store.js';
import { ADMIN_TOKEN, bearer, testApp, type TestApp } from '../helpers/app.js';
import { allEvents, expectError, faultyStore, getJson, postEvent, postRaw, roomyApp, usedThisMonth } from './support.js';

const ok = { event: 'auth.login.failure', actor_id: 'u1' };
const batchOf = (n: number) => ({ events: Array.from({ length: n }, (_, i) => ({ event: 'custom.test.item', actor_id: `u${i}` })) });

describe('error table', () => {
  let t: TestApp;
  let pro: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    t = await roomyApp();
    pro = await t.account('pro');
  });
  afterAll(() => t.close());

  describe('400 INVALID_JSON', () => {
    it.each([
      ['truncated JSON', '{"event": "auth.login.failure", "actor_id": '],
      ['garbage', 'not json at all'],
      ['trailing comma', '{"event": "auth.login.failure",}'],
      ['empty body', ''],
    ])('%s', async (_name, body) => {
      const res = await postRaw(t, pro.secret, body);
      expectError(res, 400, 'INVALID_JSON');
    });

    it('also on the batch endpoint', async () => {
      expectError(await postRaw(t, pro.secret, '{"events": [', 'application/json', '/v1/events/batch'), 400, 'INVALID_JSON');
    });

    it('accepts application/json with a charset', async () => {
      const res = await postRaw(t, pro.secret, JSON.stringify(ok), 'application/json; charset=utf-8');
      expect(res.statusCode).toBe(202);
    });
  });

  describe('validation messages name the field and what it accepts, once', () => {
    it('an alert status outside the list: one detail listing the allowed values', async () => {
      const res = await t.vigil.app.inject({ method: 'PATCH', url: '/v1/alerts/alr_none', headers: bearer(pro.secret), payload: { status: 'closed' } });
      const body = expectError(res, 400, 'INVALID_REQUEST');
      expect(body.details).toEqual([{ field: 'status', message: 'status must be one of: open, acknowledged, resolved, false_positive' }]);
      expect(body.message).toBe('status must be one of: open, acknowledged, resolved, false_positive');
    });

    it('a missing or unknown member of a request body, and a query parameter out of range', async () => {
      const patch = (payload: object) => t.vigil.app.inject({ method: 'PATCH', url: '/v1/alerts/alr_none', headers: bearer(pro.secret), payload });
      expect(expectError(await patch({}), 400, 'INVALID_REQUEST').message).toBe('Send "status", "assignee" or both.');
      expect(expectError(await patch({ status: 'open', note: 'x' }), 400, 'INVALID_REQUEST').details).toEqual([
        { field: 'note', message: 'note is not allowed here (allowed: status, assignee)' },
      ]);
      const severity = expectError(await getJson(t, pro.secret, '/v1/alerts?severity=urgent'), 400, 'INVALID_REQUEST');
      expect(severity.message).toBe('severity must be one of: low, medium, high, critical');
      const limit = expectError(await getJson(t, pro.secret, '/v1/events?limit=0'), 400, 'INVALID_REQUEST');
      expect(limit.message).toBe('limit must be an integer from 1 to 500');
    });

    it('event fields: a missing event, a status out of range, a wrong type', async () => {
      const missing = expectError(await postEvent(t, pro.secret, { actor_id: 'u1' }), 400, 'INVALID_EVENT');
      expect(missing.message).toBe('event is required');
      const status = expectError(await postEvent(t, pro.secret, { event: 'api.request', request: { status: 99 } }), 400, 'INVALID_EVENT');
      expect(status.details).toEqual([{ field: 'request.status', message: 'request.status must be an integer from 100 to 599' }]);
      const actor = expectError(await postEvent(t, pro.secret, { event: 'api.request', actor_id: 7 }), 400, 'INVALID_EVENT');
      expect(actor.message).toBe('actor_id must be a string of 1 to 256 characters');
    });
  });

  describe('400 INVALID_EVENT', () => {
    it('missing event type, with details naming the field', async () => {
      const body = expectError(await postEvent(t, pro.secret, { actor_id: 'u1' }), 400, 'INVALID_EVENT');
      expect(body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'event' })]));
    });

    it('an invalid type quotes the format rule', async () => {
      const body = expectError(await postEvent(t, pro.secret, { event: 'Auth.Login' }), 400, 'INVALID_EVENT');
      expect(body.message).toContain('^[a-z][a-z0-9]{0,29}(\\.[a-z][a-z0-9_]{0,29}){1,3}$');
      expect(body.details?.[0]).toMatchObject({ field: 'event' });
    });

    it('wrong field types are each reported', async () => {
      const body = expectError(await postEvent(t, pro.secret, { event: 'auth.login.failure', actor_id: 5, request: { status: 'x' } }), 400, 'INVALID_EVENT');
      const fields = (body.details ?? []).map((d) => d.field);
      expect(fields).toContain('actor_id');
      expect(fields).toContain('request.status');
    });

    it('a JSON array or a string is not an event', async () => {
      expectError(await postRaw(t, pro.secret, '[{"event":"auth.login.failure"}]'), 400, 'INVALID_EVENT');
      expectError(await postRaw(t, pro.secret, '"auth.login.failure"'), 400, 'INVALID_EVENT');
      expectError(await postRaw(t, pro.secret, 'null'), 400, 'INVALID_EVENT');
    });

    it('an empty batch is INVALID_EVENT, not BATCH_TOO_LARGE', async () => {
      expectError(await postEvent(t, pro.secret, { events: [] }, '/v1/events/batch'), 400, 'INVALID_EVENT');
    });

    it('carries the rate-limit headers like every /v1/events response', async () => {
      const res = await postEvent(t, pro.secret, { event: 'nope' });
      expect(res.statusCode).toBe(400);
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
      expect(res.headers['x-ratelimit-remaining']).toBeDefined();
      expect(res.headers['x-ratelimit-reset']).toBeDefined();
    });
  });

  describe('400 BATCH_TOO_LARGE per plan', () => {
    it.each([
      ['starter', 50],
      ['pro', 100],
      ['business', 100],
    ])('%s: %i events accepted, one more rejected with nothing stored or counted', async (plan, max) => {
      const acct = await t.account(plan);
      const over = await postEvent(t, acct.secret, batchOf(max + 1), '/v1/events/batch');
      const body = expectError(over, 400, 'BATCH_TOO_LARGE');
      expect(body.message).toContain(String(max));
      expect(await usedThisMonth(t, acct.secret)).toBe(0);
      expect(await allEvents(t, acct.secret)).toHaveLength(0);

      const full = await postEvent(t, acct.secret, batchOf(max), '/v1/events/batch');
      expect(full.statusCode).toBe(202);
      expect(full.json().accepted).toBe(max);
      expect(await usedThisMonth(t, acct.secret)).toBe(max);
      expect(await allEvents(t, acct.secret)).toHaveLength(max);
    });

    it('a rejected batch consumes nothing from the per-minute window', async () => {
      const acct = await t.account('starter');
      const before = await postEvent(t, acct.secret, ok);
      const remaining = Number(before.headers['x-ratelimit-remaining']);
      const over = await postEvent(t, acct.secret, batchOf(51), '/v1/events/batch');
      expect(over.statusCode).toBe(400);
      expect(Number(over.headers['x-ratelimit-remaining'])).toBe(remaining);
    });
  });

  describe('401 UNAUTHORIZED', () => {
    it.each([
      ['missing key', {}],
      ['unknown key', bearer('vgl_sk_' + 'A'.repeat(32))],
      ['malformed key', bearer('hello')],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['unknown X-API-Key', { 'x-api-key': 'vgl_pk_' + 'b'.repeat(32) }],
      ['basic auth scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ])('%s', async (_name, headers) => {
      for (const [method, url] of [
        ['POST', '/v1/events'],
        ['POST', '/v1/events/batch'],
        ['GET', '/v1/events'],
        ['GET', '/v1/usage'],
        ['GET', '/v1/catalog'],
      ] as const) {
        const res = await t.vigil.app.inject({ method, url, headers, payload: method === 'POST' ? ok : undefined });
        expectError(res, 401, 'UNAUTHORIZED');
      }
    });

    it('X-API-Key with a valid key works', async () => {
      const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: { 'x-api-key': pro.secret }, payload: ok });
      expect(res.statusCode).toBe(202);
    });

    it('a revoked key answers 401 at once', async () => {
      const acct = await t.account('pro');
      expect((await postEvent(t, acct.secret, ok)).statusCode).toBe(202);
      const keys = await t.vigil.app.inject({ method: 'GET', url: `/admin/accounts/${acct.id}/keys`, headers: bearer(ADMIN_TOKEN) });
      const secretKey = keys.json().data.find((k: { kind: string }) => k.kind === 'secret');
      const del = await t.vigil.app.inject({ method: 'DELETE', url: `/admin/keys/${secretKey.id}`, headers: bearer(ADMIN_TOKEN) });
      expect(del.statusCode).toBe(204);
      const body = expectError(await postEvent(t, acct.secret, ok), 401, 'UNAUTHORIZED');
      // The same answer as an unknown key: it does not confirm that the key existed.
      expect(body.message).toBe('Invalid API key.');
      expectError(await getJson(t, acct.secret, '/v1/events'), 401, 'UNAUTHORIZED');
      expect((await postEvent(t, acct.publishable, ok)).statusCode).toBe(202);
    });
  });

  it('403 PLAN_UPGRADE_REQUIRED: the batch endpoint on Free, nothing stored', async () => {
    const free = await t.account('free');
    const body = expectError(await postEvent(t, free.secret, batchOf(1), '/v1/events/batch'), 403, 'PLAN_UPGRADE_REQUIRED');
    expect(body.message).toMatch(/free/i);
    expect(await usedThisMonth(t, free.secret)).toBe(0);
  });

  describe('403 FORBIDDEN: publishable key on read endpoints', () => {
    it.each(['/v1/events', '/v1/events/evt_01ABC', '/v1/usage', '/v1/alerts', '/v1/alerts/alr_01ABC'])('GET %s', async (url) => {
      expectError(await getJson(t, pro.publishable, url), 403, 'FORBIDDEN');
    });

    it('PATCH /v1/alerts/{id}', async () => {
      const res = await t.vigil.app.inject({ method: 'PATCH', url: '/v1/alerts/alr_x', headers: bearer(pro.publishable), payload: { status: 'resolved' } });
      expectError(res, 403, 'FORBIDDEN');
    });

    it('but it may ingest and read the catalog', async () => {
      expect((await postEvent(t, pro.publishable, ok)).statusCode).toBe(202);
      expect((await getJson(t, pro.publishable, '/v1/catalog')).statusCode).toBe(200);
    });
  });

  describe('404 NOT_FOUND', () => {
    it.each([
      ['GET', '/v1/nothing-here'],
      ['POST', '/v1/event'],
      ['GET', '/'],
      ['GET', '/v2/events'],
    ] as const)('unknown route %s %s', async (method, url) => {
      expectError(await t.vigil.app.inject({ method, url, headers: bearer(pro.secret) }), 404, 'NOT_FOUND');
    });

    it('unknown record', async () => {
      expectError(await getJson(t, pro.secret, '/v1/events/evt_01HZZZZZZZZZZZZZZZZZZZZZZZ'), 404, 'NOT_FOUND');
      expectError(await getJson(t, pro.secret, '/v1/alerts/alr_nothing'), 404, 'NOT_FOUND');
    });

    it("another account's record", async () => {
      const other = await t.account('pro');
      const id = (await postEvent(t, other.secret, ok)).json().id;
      expect((await getJson(t, other.secret, `/v1/events/${id}`)).statusCode).toBe(200);
      const body = expectError(await getJson(t, pro.secret, `/v1/events/${id}`), 404, 'NOT_FOUND');
      expect(JSON.stringify(body)).not.toContain(other.id);
    });
  });

  describe('405 with Allow', () => {
    it.each([
      ['DELETE', '/v1/events', ['GET', 'POST']],
      ['PUT', '/v1/events/batch', ['POST']],
      ['GET', '/v1/events/batch', ['POST']],
      ['POST', '/v1/usage', ['GET']],
      ['DELETE', '/v1/events/evt_x', ['GET']],
      ['POST', '/healthz', ['GET']],
    ] as const)('%s %s', async (method, url, allowed) => {
      const res = await t.vigil.app.inject({ method, url, headers: bearer(pro.secret), payload: method === 'GET' || method === 'DELETE' ? undefined : ok });
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      const allow = String(res.headers.allow).split(/,\s*/).sort();
      expect(allow).toEqual([...allowed].sort());
    });
  });

  describe('413 PAYLOAD_TOO_LARGE', () => {
    it('single event body over 64 KiB', async () => {
      const big = JSON.stringify({ event: 'custom.big.one', user_agent: 'x'.repeat(64 * 1024) });
      expectError(await postRaw(t, pro.secret, big), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('a single event body of exactly 64 KiB is read (then judged by the field rules)', async () => {
      const base = JSON.stringify({ event: 'custom.big.one', pad: '' });
      const body = JSON.stringify({ event: 'custom.big.one', pad: 'x'.repeat(64 * 1024 - base.length) });
      expect(body.length).toBe(64 * 1024);
      const res = await postRaw(t, pro.secret, body);
      expect(res.statusCode).not.toBe(413);
    });

    it('batch body over 1 MiB, nothing stored', async () => {
      const acct = await t.account('business');
      const events = Array.from({ length: 100 }, () => ({ event: 'custom.big.one', user_agent: 'y'.repeat(11 * 1024) }));
      const res = await postRaw(t, acct.secret, JSON.stringify({ events }), 'application/json', '/v1/events/batch');
      expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      expect(await usedThisMonth(t, acct.secret)).toBe(0);
    });

    it('a batch body over 64 KiB but under 1 MiB is accepted', async () => {
      const events = Array.from({ length: 10 }, () => ({ event: 'custom.big.one', user_agent: 'z'.repeat(2000), metadata: { pad: 'p'.repeat(8 * 1024) } }));
      const res = await postEvent(t, pro.secret, { events }, '/v1/events/batch');
      expect(res.statusCode).toBe(202);
    });
  });

  describe('415 UNSUPPORTED_MEDIA_TYPE', () => {
    it.each([
      ['text/plain', JSON.stringify(ok)],
      ['application/x-www-form-urlencoded', 'event=auth.login.failure'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="event"\r\n\r\nauth.login\r\n--x--'],
      ['application/xml', '<event/>'],
    ])('%s', async (type, body) => {
      expectError(await postRaw(t, pro.secret, body, type), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectError(await postRaw(t, pro.secret, body, type, '/v1/events/batch'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('a body without a content type', async () => {
      const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(pro.secret), payload: Buffer.from(JSON.stringify(ok)) });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });
  });

  it('every error body has error, message and request_id and nothing else but details/retry_after', async () => {
    const res = await postEvent(t, pro.secret, { event: 'x' });
    const body = expectError(res, 400, 'INVALID_EVENT');
    expect(Object.keys(body).sort()).toEqual(['details', 'error', 'message', 'request_id']);
  });
});

describe('500 INTERNAL and 503 UNAVAILABLE', () => {
  let t: TestApp;
  let faults: ReturnType<typeof faultyStore>['faults'];
  let acct: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    const faulty = faultyStore();
    faults = faulty.faults;
    t = await testApp({}, { store: faulty.store });
    acct = await t.account('pro');
  });
  afterAll(() => t.close());

  it('a plain error from the store answers 500 INTERNAL without a stack trace or the error text', async () => {
    faults.getEvent = () => new Error('sqlite internals: secret path /var/lib/x');
    try {
      const res = await getJson(t, acct.secret, '/v1/events/evt_whatever');
      expectError(res, 500, 'INTERNAL');
      expect(res.body).not.toContain('secret path');
      expect(res.body).not.toMatch(/\bat .+:\d+:\d+/);
      expect(res.body).not.toContain('stack');
    } finally {
      delete faults.getEvent;
    }
  });

  it('a plain error during commit answers 500 and counts nothing', async () => {
    faults.commit = () => new TypeError('unexpected bug');
    try {
      const res = await postEvent(t, acct.secret, ok);
      expectError(res, 500, 'INTERNAL');
      expect(res.body).not.toContain('unexpected bug');
    } finally {
      delete faults.commit;
    }
    expect(await usedThisMonth(t, acct.secret)).toBe(0);
  });

  it('storage unavailable on commit: 503 UNAVAILABLE with Retry-After, nothing stored or counted', async () => {
    const before = await usedThisMonth(t, acct.secret);
    faults.commit = () => new StoreUnavailableError('database is locked');
    try {
      const single = await postEvent(t, acct.secret, { ...ok, event_id: 'retry-me-1' });
      expect(single.headers['retry-after']).toBe('1');
      const body = expectError(single, 503, 'UNAVAILABLE');
      expect(single.headers['retry-after']).toBeDefined();
      expect(body.message).not.toContain('locked');
      expectError(await postEvent(t, acct.secret, batchOf(5), '/v1/events/batch'), 503, 'UNAVAILABLE');
    } finally {
      delete faults.commit;
    }
    expect(await usedThisMonth(t, acct.secret)).toBe(before);
    expect(await allEvents(t, acct.secret, 'actor_id=u1')).toHaveLength(0);

    // The same event_id retried after recovery is stored once, as a new event.
    const retry = await postEvent(t, acct.secret, { ...ok, event_id: 'retry-me-1' });
    expect(retry.statusCode).toBe(202);
    expect(await usedThisMonth(t, acct.secret)).toBe(before + 1);
    expect(await allEvents(t, acct.secret, 'actor_id=u1')).toHaveLength(1);
  });

  it('storage unavailable on the idempotency lookup: 503 too', async () => {
    faults.findIdempotency = () => new StoreUnavailableError('connection lost');
    try {
      expectError(await postEvent(t, acct.secret, { ...ok, event_id: 'lookup-fails' }), 503, 'UNAVAILABLE');
    } finally {
      delete faults.findIdempotency;
    }
  });

  it('storage unavailable on authentication: 503, not 401', async () => {
    const fresh = await t.account('pro');
    faults.findKeyByHash = () => new StoreUnavailableError('connection lost');
    try {
      expectError(await postEvent(t, fresh.secret, ok), 503, 'UNAVAILABLE');
    } finally {
      delete faults.findKeyByHash;
    }
  });

  it('storage unavailable on a read: 503', async () => {
    faults.listEvents = () => new StoreUnavailableError('disk I/O error');
    try {
      expectError(await getJson(t, acct.secret, '/v1/events'), 503, 'UNAVAILABLE');
    } finally {
      delete faults.listEvents;
    }
  });
});
