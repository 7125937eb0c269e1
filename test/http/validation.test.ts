import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { allEvents, expectError, getJson, postEvent, postRaw, roomyApp } from './support.js';

const HOUR = 3_600_000;

/** `levels` nested objects: nest(1) = {"a": 1}, nest(2) = {"a": {"a": 1}} ... */
function nest(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe('event field validation', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  beforeAll(async () => {
    t = await roomyApp();
    acct = await t.account('pro');
  });
  afterAll(() => t.close());

  async function accepted(body: unknown, key = acct.secret): Promise<Record<string, unknown>> {
    const res = await postEvent(t, key, body);
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 202 });
    const stored = await getJson(t, acct.secret, `/v1/events/${res.json().id}`);
    expect(stored.statusCode).toBe(200);
    return stored.json();
  }

  async function rejected(body: unknown, field: string): Promise<void> {
    const res = typeof body === 'string' ? await postRaw(t, acct.secret, body) : await postEvent(t, acct.secret, body);
    const err = expectError(res, 400, 'INVALID_EVENT');
    expect(err.details?.map((d) => d.field)).toContain(field);
  }

  describe('timestamp', () => {
    it('ISO 8601 with Z, with an offset and with milliseconds', async () => {
      expect((await accepted({ event: 'auth.login', timestamp: '2026-01-14T08:30:00Z' })).timestamp).toBe('2026-01-14T08:30:00.000Z');
      expect((await accepted({ event: 'auth.login', timestamp: '2026-01-14T10:30:00+02:00' })).timestamp).toBe('2026-01-14T08:30:00.000Z');
      expect((await accepted({ event: 'auth.login', timestamp: '2026-01-14T08:30:00.123Z' })).timestamp).toBe('2026-01-14T08:30:00.123Z');
    });

    it('Unix milliseconds', async () => {
      const ms = t.clock.now() - HOUR;
      expect((await accepted({ event: 'auth.login', timestamp: ms })).timestamp).toBe(new Date(ms).toISOString());
    });

    it('defaults to the receive time', async () => {
      expect((await accepted({ event: 'auth.login' })).timestamp).toBe(new Date(t.clock.now()).toISOString());
    });

    it('Unix seconds are rejected (they would land in 1970)', async () => {
      await rejected({ event: 'auth.login', timestamp: Math.floor(t.clock.now() / 1000) }, 'timestamp');
    });

    it.each(['yesterday', '14/01/2026', '2026-13-45T00:00:00Z', '', 'NaN'])('not a date: %j', async (value) => {
      await rejected({ event: 'auth.login', timestamp: value }, 'timestamp');
    });

    it('up to 24 h in the future is accepted, more is rejected', async () => {
      const now = t.clock.now();
      await accepted({ event: 'auth.login', timestamp: now + 24 * HOUR });
      await accepted({ event: 'auth.login', timestamp: new Date(now + 23 * HOUR).toISOString() });
      await rejected({ event: 'auth.login', timestamp: now + 24 * HOUR + 1000 }, 'timestamp');
      await rejected({ event: 'auth.login', timestamp: new Date(now + 25 * HOUR).toISOString() }, 'timestamp');
    });
  });

  describe('ip', () => {
    it.each([
      ['8.8.8.8', '8.8.8.8'],
      ['2001:db8::1', '2001:db8::1'],
      ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
      ['::ffff:203.0.113.7', '203.0.113.7'],
      ['::1', '::1'],
    ])('%s is stored as %s', async (ip, stored) => {
      expect((await accepted({ event: 'auth.login', ip })).ip).toBe(stored);
    });

    it.each(['999.1.1.1', '1.2.3', 'localhost', '2001:db8:::1', '8.8.8.8/32', '', ' 8.8.8.8'])('%j is rejected', async (ip) => {
      await rejected({ event: 'auth.login', ip }, 'ip');
    });

    it('the stored (normalised) address is what the ip filter finds', async () => {
      await accepted({ event: 'custom.ipfilter.x', ip: '::ffff:198.51.100.4' });
      const found = await allEvents(t, acct.secret, 'ip=198.51.100.4&type=custom.ipfilter.x');
      expect(found).toHaveLength(1);
    });
  });

  describe('email', () => {
    it.each(['a@b.co', 'first.last+tag@sub.example.org'])('%s accepted', async (email) => {
      expect((await accepted({ event: 'account.created', email })).email).toBe(email);
    });
    it.each(['not-an-email', 'a b@c.d', '@example.com', 'user@', ''])('%j rejected', async (email) => {
      await rejected({ event: 'account.created', email }, 'email');
    });
  });

  describe('prototype keys anywhere are rejected', () => {
    it.each([
      ['__proto__ at top level', '{"event":"auth.login","__proto__":{"admin":true}}', '__proto__'],
      ['constructor at top level', '{"event":"auth.login","constructor":{"prototype":{}}}', 'constructor'],
      ['prototype at top level', '{"event":"auth.login","prototype":1}', 'prototype'],
      ['__proto__ in metadata', '{"event":"auth.login","metadata":{"__proto__":{"x":1}}}', 'metadata.__proto__'],
      ['constructor deep in metadata', '{"event":"auth.login","metadata":{"a":{"b":{"constructor":1}}}}', 'metadata.a.b.constructor'],
      ['prototype in an array in metadata', '{"event":"auth.login","metadata":{"list":[1,{"prototype":2}]}}', 'metadata.list[1].prototype'],
      ['__proto__ in nested arrays', '{"event":"auth.login","metadata":{"m":[[{"x":[{"__proto__":null}]}]]}}', 'metadata.m[0][0].x[0].__proto__'],
      ['__proto__ in request', '{"event":"auth.login","request":{"__proto__":{}}}', 'request.__proto__'],
    ])('%s', async (_name, body, field) => {
      await rejected(body, field);
    });

    it('in a batch, reported with the index', async () => {
      const res = await postRaw(
        t,
        acct.secret,
        '{"events":[{"event":"auth.login"},{"event":"auth.login","metadata":{"__proto__":{}}}]}',
        'application/json',
        '/v1/events/batch',
      );
      const err = expectError(res, 400, 'INVALID_EVENT');
      expect(err.details?.[0]).toMatchObject({ index: 1, field: 'metadata.__proto__' });
    });

    it('nothing was polluted', () => {
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
      expect(({} as Record<string, unknown>).x).toBeUndefined();
    });

    it('keys that merely contain the words are fine', async () => {
      const doc = await accepted({ event: 'auth.login', metadata: { proto: 1, constructor_name: 'x', my_prototype: true } });
      expect(doc.metadata).toEqual({ proto: 1, constructor_name: 'x', my_prototype: true });
    });
  });

  describe('metadata', () => {
    it('32 levels deep is accepted and stored intact', async () => {
      const doc = await accepted({ event: 'custom.deep.ok', metadata: nest(32) });
      expect(doc.metadata).toEqual(nest(32));
    });

    it('33 levels deep is rejected', async () => {
      await rejected({ event: 'custom.deep.no', metadata: nest(33) }, 'metadata');
    });

    it('arrays count as levels', async () => {
      let value: unknown = 1;
      for (let i = 0; i < 32; i++) value = [value];
      await accepted({ event: 'custom.deep.arr', metadata: { a: (value as unknown[])[0] } });
      await rejected({ event: 'custom.deep.arr', metadata: { a: value } }, 'metadata');
    });

    it('a body nested 100,000 levels is rejected, not a stack overflow', async () => {
      const body = '{"event":"custom.deep.bomb","metadata":' + '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000) + '}';
      const res = await postRaw(t, acct.secret, body);
      expectError(res, 400, 'INVALID_EVENT');
    });

    it('16 KiB serialised is accepted, one byte more is rejected', async () => {
      // JSON.stringify({ blob: s }) is s.length + 11 bytes.
      await accepted({ event: 'custom.size.ok', metadata: { blob: 'x'.repeat(16 * 1024 - 11) } });
      await rejected({ event: 'custom.size.no', metadata: { blob: 'x'.repeat(16 * 1024 - 10) } }, 'metadata');
    });

    it('must be an object', async () => {
      await rejected({ event: 'auth.login', metadata: [1, 2] }, 'metadata');
      await rejected({ event: 'auth.login', metadata: 'text' }, 'metadata');
    });

    it('unknown top-level fields are kept in metadata.extra', async () => {
      const doc = await accepted({ event: 'custom.extra.one', plan_tier: 'gold', attempts: 3, metadata: { source: 'web' } });
      expect(doc.metadata).toEqual({ source: 'web', extra: { plan_tier: 'gold', attempts: 3 } });
      expect(doc).not.toHaveProperty('plan_tier');
    });
  });

  describe('other fields', () => {
    it.each([
      ['event_id', { event_id: '' }],
      ['event_id', { event_id: 'x'.repeat(65) }],
      ['event_id', { event_id: 'has space' }],
      ['actor_id', { actor_id: 'a'.repeat(257) }],
      ['request.path', { request: { path: '/'.repeat(2049) } }],
      ['request.status', { request: { status: 99 } }],
      ['password_sha1', { password_sha1: 'abc' }],
    ])('%s rejected for %j', async (field, extra) => {
      await rejected({ event: 'auth.login', ...extra }, field);
    });

    it('edge values accepted', async () => {
      const doc = await accepted({
        event: 'auth.login',
        event_id: 'A'.repeat(64),
        actor_id: 'a'.repeat(256),
        request: { method: 'get', path: '/'.repeat(2048), status: 599 },
      });
      expect(doc.event_id).toBe('A'.repeat(64));
      expect((doc.request as { method: string }).method).toBe('GET');
    });
  });

  it('password_sha1 is never in the stored event or any response', async () => {
    const hash = '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8';
    const res = await postEvent(t, acct.secret, {
      event: 'auth.login.success',
      actor_id: 'pw-user',
      email: 'p@example.com',
      password_sha1: hash,
      event_id: 'pw-1',
    });
    expect(res.statusCode).toBe(202);
    const replay = await postEvent(t, acct.secret, { event: 'auth.login.success', password_sha1: hash, event_id: 'pw-1' });
    const one = await getJson(t, acct.secret, `/v1/events/${res.json().id}`);
    const list = await getJson(t, acct.secret, '/v1/events?actor_id=pw-user');
    for (const text of [res.body, replay.body, one.body, list.body]) {
      expect(text.toLowerCase()).not.toContain(hash.toLowerCase());
      expect(text).not.toContain('password_sha1');
    }
    expect(list.json().data).toHaveLength(1);
  });

  describe('publishable keys', () => {
    it('fill ip from the connecting address when the event has none', async () => {
      const res = await t.vigil.app.inject({
        method: 'POST',
        url: '/v1/events',
        remoteAddress: '203.0.113.50',
        headers: { authorization: `Bearer ${acct.publishable}` },
        payload: { event: 'auth.login' },
      });
      expect(res.statusCode).toBe(202);
      expect((await getJson(t, acct.secret, `/v1/events/${res.json().id}`)).json().ip).toBe('203.0.113.50');
    });

    it('replace an ip the event carries: a public key cannot name another address', async () => {
      const res = await t.vigil.app.inject({
        method: 'POST',
        url: '/v1/events',
        remoteAddress: '203.0.113.50',
        headers: { authorization: `Bearer ${acct.publishable}` },
        payload: { event: 'auth.login', ip: '8.8.4.4' },
      });
      expect((await getJson(t, acct.secret, `/v1/events/${res.json().id}`)).json().ip).toBe('203.0.113.50');
    });

    it('secret keys (servers) do not: the connecting address is the server, not the user', async () => {
      const res = await t.vigil.app.inject({
        method: 'POST',
        url: '/v1/events',
        remoteAddress: '203.0.113.50',
        headers: { authorization: `Bearer ${acct.secret}` },
        payload: { event: 'auth.login' },
      });
      expect((await getJson(t, acct.secret, `/v1/events/${res.json().id}`)).json().ip).toBeUndefined();
    });

    it('an IPv4-mapped connecting address is stored as IPv4', async () => {
      const res = await t.vigil.app.inject({
        method: 'POST',
        url: '/v1/events',
        remoteAddress: '::ffff:198.51.100.9',
        headers: { authorization: `Bearer ${acct.publishable}` },
        payload: { event: 'auth.login' },
      });
      expect(res.statusCode).toBe(202);
      expect((await getJson(t, acct.secret, `/v1/events/${res.json().id}`)).json().ip).toBe('198.51.100.9');
    });
  });
});

describe('NUL characters', () => {
  it('are rejected anywhere in an event with the field named', async () => {
    const { testApp, bearer } = await import('../helpers/app.js');
    const t = await testApp();
    try {
      const { secret } = await t.account('pro');
      for (const [payload, field] of [
        [{ event: 'auth.login.success', actor_id: 'a\u0000b' }, 'actor_id'],
        [{ event: 'auth.login.success', metadata: { note: ['ok', 'x\u0000'] } }, 'metadata.note[1]'],
      ] as const) {
        const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(secret), payload });
        expect(res.statusCode).toBe(400);
        expect(res.json().details[0].field).toBe(field);
      }
    } finally {
      await t.close();
    }
  });
});
