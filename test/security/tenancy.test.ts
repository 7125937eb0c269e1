import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, bearer, testApp, type TestApp } from '../helpers/app.js';
import { allEvents, expectError, getJson, postEvent, roomyApp } from '../http/support.js';

// Many requests per test on a loaded machine: time is not what these tests measure.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const randomSecretKey = () => `vgl_sk_${[...randomBytes(32)].map((b) => BASE62[b % 62]).join('')}`;
const event = (extra: Record<string, unknown> = {}) => ({ event: 'auth.login.success', actor_id: 'alice', ip: '198.51.100.7', ...extra });

describe('key guessing', () => {
  it('random secret keys from one address get 401 until the per-IP cap (600/min), then 429', async () => {
    const t = await testApp();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 650; i += 50) {
        const answers = await Promise.all(Array.from({ length: 50 }, () => getJson(t, randomSecretKey(), '/v1/events')));
        statuses.push(...answers.map((r) => r.statusCode));
      }
      expect(statuses.filter((s) => s === 401).length).toBe(600);
      expect(statuses.filter((s) => s === 429).length).toBe(50);
      // Over the cap even a valid key learns nothing.
      const { secret } = await t.account('pro');
      expectError(await getJson(t, secret, '/v1/events'), 429, 'RATE_LIMITED');
    } finally {
      await t.close();
    }
  }, 180_000);
});

describe('publishable keys, CORS and revocation', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  const ALLOWED = 'https://app.example.com';
  const EVIL = 'https://evil.example';
  beforeAll(async () => {
    t = await roomyApp();
    acct = await t.account('pro', [ALLOWED]);
  });
  afterAll(() => t.close());

  it('ingest only: every read or manage endpoint is 403, admin is 401', async () => {
    const res = await postEvent(t, acct.publishable, event(), '/v1/events', { origin: ALLOWED });
    expect(res.statusCode).toBe(202);
    for (const url of ['/v1/events', `/v1/events/${res.json().id}`, '/v1/alerts', '/v1/usage']) {
      expectError(await getJson(t, acct.publishable, url), 403, 'FORBIDDEN');
    }
    expectError(
      await t.vigil.app.inject({ method: 'POST', url: '/admin/accounts', headers: bearer(acct.publishable), payload: { name: 'x', plan: 'pro' } }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('CORS: the allowed origin gets Access-Control-Allow-Origin, another origin a 403 without it', async () => {
    const ok = await postEvent(t, acct.publishable, event(), '/v1/events', { origin: ALLOWED });
    expect(ok.statusCode).toBe(202);
    expect(ok.headers['access-control-allow-origin']).toBe(ALLOWED);
    const bad = await postEvent(t, acct.publishable, event(), '/v1/events', { origin: EVIL });
    expectError(bad, 403, 'FORBIDDEN');
    expect(bad.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('preflight: OPTIONS from the allowed origin is 204 with CORS headers; from another origin no ACAO', async () => {
    for (const url of ['/v1/events', '/v1/events/batch']) {
      const headers = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' };
      const ok = await t.vigil.app.inject({ method: 'OPTIONS', url, headers: { origin: ALLOWED, ...headers } });
      expect(ok.statusCode).toBe(204);
      expect(ok.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(String(ok.headers['access-control-allow-methods'])).toContain('POST');
      expect(String(ok.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
      const bad = await t.vigil.app.inject({ method: 'OPTIONS', url, headers: { origin: EVIL, ...headers } });
      expect(bad.statusCode).toBeLessThan(500);
      expect(bad.headers['access-control-allow-origin']).toBeUndefined();
      expect(bad.headers['access-control-allow-methods']).toBeUndefined();
    }
  });

  it('a secret key never answers with CORS headers', async () => {
    const res = await postEvent(t, acct.secret, event(), '/v1/events', { origin: EVIL });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('revocation takes effect at once, also for a key just used (cached)', async () => {
    const admin = bearer(ADMIN_TOKEN);
    const created = await t.vigil.app.inject({ method: 'POST', url: `/admin/accounts/${acct.id}/keys`, headers: admin, payload: { kind: 'secret' } });
    expect(created.statusCode).toBe(201);
    const { id, key } = created.json();
    expect((await postEvent(t, key, event())).statusCode).toBe(202);
    expect((await getJson(t, key, '/v1/usage')).statusCode).toBe(200);
    expect((await t.vigil.app.inject({ method: 'DELETE', url: `/admin/keys/${id}`, headers: admin })).statusCode).toBe(204);
    expectError(await postEvent(t, key, event()), 401, 'UNAUTHORIZED');
    expectError(await getJson(t, key, '/v1/usage'), 401, 'UNAUTHORIZED');
    // A revoked publishable key's origins stop being offered to preflights.
    const pub = await t.vigil.app.inject({
      method: 'POST',
      url: `/admin/accounts/${acct.id}/keys`,
      headers: admin,
      payload: { kind: 'publishable', allowed_origins: ['https://gone.example'] },
    });
    const pre = () =>
      t.vigil.app.inject({ method: 'OPTIONS', url: '/v1/events', headers: { origin: 'https://gone.example', 'access-control-request-method': 'POST' } });
    expect((await pre()).headers['access-control-allow-origin']).toBe('https://gone.example');
    await t.vigil.app.inject({ method: 'DELETE', url: `/admin/keys/${pub.json().id}`, headers: admin });
    expect((await pre()).headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('tenant isolation (property)', () => {
  it("several accounts doing random writes and reads never see another account's record", async () => {
    const t = await roomyApp();
    try {
      const accounts = await Promise.all([0, 1, 2].map(() => t.account('pro')));
      const owner = new Map<string, number>();
      const actors = ['alice', 'bob', 'carol', "' OR 1=1 --", '%'];
      const types = ['auth.login.success', 'auth.login.failure', 'data.exported', 'admin.user.created'];
      const write = fc.record({ kind: fc.constant('write' as const), who: fc.nat(2), actor: fc.constantFrom(...actors), type: fc.constantFrom(...types) });
      const list = fc.record({
        kind: fc.constant('list' as const),
        who: fc.nat(2),
        filter: fc.record(
          {
            actor_id: fc.constantFrom(...actors),
            type: fc.constantFrom(...types, 'auth.*'),
            prefix: fc.constantFrom('auth', 'data', ''),
            ip: fc.constant('198.51.100.7'),
            min_risk: fc.nat(100),
          },
          { requiredKeys: [] },
        ),
      });
      const get = fc.record({ kind: fc.constant('get' as const), who: fc.nat(2), pick: fc.nat() });
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(write, write, list, get), { minLength: 1, maxLength: 25 }), async (commands) => {
          for (const c of commands) {
            const acct = accounts[c.who]!;
            if (c.kind === 'write') {
              const res = await postEvent(t, acct.secret, event({ actor_id: c.actor, event: c.type }));
              expect(res.statusCode).toBe(202);
              owner.set(res.json().id, c.who);
            } else if (c.kind === 'list') {
              const qs = new URLSearchParams(Object.entries(c.filter).map(([k, v]): [string, string] => [k, String(v)])).toString();
              const res = await getJson(t, acct.secret, `/v1/events?limit=500&${qs}`);
              expect(res.statusCode).toBe(200);
              for (const row of res.json().data) expect(owner.get(row.id)).toBe(c.who);
            } else {
              const ids = [...owner.keys()];
              if (ids.length === 0) continue;
              const id = ids[c.pick % ids.length]!;
              const res = await getJson(t, acct.secret, `/v1/events/${id}`);
              if (owner.get(id) === c.who) expect(res.json().id).toBe(id);
              else expectError(res, 404, 'NOT_FOUND');
            }
          }
        }),
        { numRuns: 25 },
      );
      // Every account sees exactly its own events, nothing more.
      for (const [i, acct] of accounts.entries()) {
        const mine = [...owner]
          .filter(([, w]) => w === i)
          .map(([id]) => id)
          .sort();
        expect((await allEvents(t, acct.secret)).map((e) => e.id as string).sort()).toEqual(mine);
      }
    } finally {
      await t.close();
    }
  }, 180_000);
});

describe('SQL metacharacters and LIKE wildcards in read filters', () => {
  const HOSTILE = ["' OR 1=1 --", '%', '_', '\\', "a'b", '"; DROP TABLE events; --', '%%', 'a_c', 'a%c', '\\%', "'", '*'];
  it('every filter returns exactly the literal matches', async () => {
    const t = await roomyApp();
    try {
      const victim = await t.account('pro');
      const other = await t.account('pro');
      for (const actor of [...HOSTILE, 'abc', 'aXc', 'alice']) {
        expect((await postEvent(t, victim.secret, event({ actor_id: actor }))).statusCode).toBe(202);
        expect((await postEvent(t, other.secret, event({ actor_id: actor }))).statusCode).toBe(202);
      }
      expect((await postEvent(t, victim.secret, event({ event: 'auth.login.failure', actor_id: 'abc' }))).statusCode).toBe(202);
      const total = (await allEvents(t, victim.secret)).length;
      expect(total).toBe(HOSTILE.length + 4);
      const mine = new Set((await allEvents(t, victim.secret)).map((e) => e.id));

      for (const value of HOSTILE) {
        const q = encodeURIComponent(value);
        const byActor = await allEvents(t, victim.secret, `actor_id=${q}`);
        expect(byActor.map((e) => e.actor_id)).toEqual([value]);
        for (const [filter, expected] of [
          ['type', 0],
          ['prefix', 0],
          ['ip', 0],
          ['tag', 0],
        ] as const) {
          const res = await getJson(t, victim.secret, `/v1/events?${filter}=${q}`);
          expect(res.statusCode, `${filter}=${value}`).toBeLessThan(500);
          if (res.statusCode === 200) {
            // `*` as a type is not a glob; `%`/`_` match no type, ip or tag literally.
            expect(res.json().data.length, `${filter}=${value}`).toBe(expected);
          } else expect(res.statusCode).toBe(400);
        }
        for (const filter of ['since', 'until', 'min_risk']) {
          const res = await getJson(t, victim.secret, `/v1/events?${filter}=${q}`);
          expect(res.statusCode, `${filter}=${value}`).toBe(400);
        }
        // A forged cursor is at worst a position: never another account's rows.
        const cursor = await getJson(t, victim.secret, `/v1/events?cursor=${q}`);
        expect([200, 400]).toContain(cursor.statusCode);
        if (cursor.statusCode === 200) for (const e of cursor.json().data) expect(mine.has(e.id)).toBe(true);
        for (const filter of ['type', 'actor_id', 'severity', 'status', 'since']) {
          const res = await getJson(t, victim.secret, `/v1/alerts?${filter}=${q}`);
          expect([200, 400], `alerts ${filter}=${value}`).toContain(res.statusCode);
          if (res.statusCode === 200) expect(res.json().data).toEqual([]);
        }
        expectError(await getJson(t, victim.secret, `/v1/events/${q}`), 404, 'NOT_FOUND');
      }
      // `_` and `%` are literal in a prefix: `auth_` does not match `auth.`; `auth.login.` matches both types.
      expect((await allEvents(t, victim.secret, 'prefix=auth_')).length).toBe(0);
      expect((await allEvents(t, victim.secret, 'prefix=auth%25')).length).toBe(0);
      expect((await allEvents(t, victim.secret, 'prefix=auth.login.')).length).toBe(total);
      expect((await allEvents(t, victim.secret, 'type=auth.login.failure')).length).toBe(1);
      expect((await allEvents(t, victim.secret, 'type=auth.*')).length).toBe(total);
      // Still only the victim's own events.
      for (const e of await allEvents(t, victim.secret, 'actor_id=abc')) expect(mine.has(e.id)).toBe(true);
    } finally {
      await t.close();
    }
  }, 180_000);
});
