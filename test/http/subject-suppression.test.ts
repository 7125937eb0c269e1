/**
 * The suppression list of an erasure: later events of an erased subject are answered `dropped`,
 * not stored and not learned by detection, in the erasing account only; removing an identifier
 * (on one instance) or its expiry makes its events stored again everywhere. In scale-out mode a
 * second instance shares the first's PostgreSQL and Redis, and the events go to it.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSecret, pseudonymOf } from '../../src/privacy/pseudonym.js';
import { DAY_MS } from '../../src/util/duration.js';
import { bearer, SCALE_OUT, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { expectError, roomyApp, stateTexts } from './support.js';

type Json = any;
type Method = 'GET' | 'POST' | 'DELETE';

const MASTER = 'a-master-secret-of-at-least-32-characters';
const ACTOR = 'zqsuppressedana';
const EMAIL = 'Dana.Suppress@example.org';
const IP = '198.51.100.9';
const DEVICE = 'dev-zq-5521-suppress';
const RAW = [ACTOR, EMAIL, EMAIL.toLowerCase(), IP, DEVICE];
const BYSTANDER = 'bystanderzq';
const IDENTIFIERS = [
  { kind: 'actor_id', value: ACTOR },
  { kind: 'email', value: EMAIL },
  { kind: 'ip', value: IP },
  { kind: 'device_id', value: DEVICE },
];

const mentionsSubject = (text: string) => RAW.some((raw) => text.includes(raw));

describe('data subjects: the suppression list', () => {
  let a: TestApp;
  /** A second instance on the same PostgreSQL and Redis in scale-out mode; the same app embedded. */
  let b: TestApp;
  let acct: { id: string; secret: string };
  let other: { id: string; secret: string };
  let privacyKey: string;

  const call = (t: TestApp, key: string, method: Method, url: string, payload?: object): Promise<LightMyRequestResponse> =>
    t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload }) });
  /** One batch; answers each event's status. */
  const send = async (t: TestApp, key: string, events: object[]): Promise<string[]> => {
    const res = await call(t, key, 'POST', '/v1/events/batch', { events });
    expect(res.statusCode, res.body).toBe(202);
    return (res.json().results as Json[]).map((r) => r.status as string);
  };
  const storedOf = async (t: TestApp, key: string, query: string): Promise<Json[]> => (await call(t, key, 'GET', `/v1/events?${query}`)).json().data;
  const suppressedCount = async (t: TestApp): Promise<number> => {
    const text = (await t.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
    return Number(/^vigil_events_total\{outcome="dropped_suppressed"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };
  const listed = async (key: string): Promise<Json[]> => {
    const res = await call(a, key, 'GET', '/v1/subjects/suppressions');
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  beforeAll(async () => {
    a = await roomyApp({ VIGIL_PSEUDONYM_SECRET: MASTER });
    if (SCALE_OUT) {
      const redis = { VIGIL_REDIS_URL: a.config.redisUrl as string, VIGIL_REDIS_PREFIX: a.config.redisPrefix, VIGIL_PSEUDONYM_SECRET: MASTER };
      b = await roomyApp(redis, { store: a.services.store, clock: a.clock });
      for (const t of [a, b]) await until(() => t.services.redisHealth?.degraded === false, 'Redis connected');
    } else b = a;
    acct = await a.account('pro');
    other = await a.account('pro');
    const res = await call(a, acct.secret, 'POST', '/v1/keys', { name: 'privacy', scopes: ['subjects'] });
    expect(res.statusCode, res.body).toBe(201);
    privacyKey = res.json().key;
  }, 60_000);
  // b shares a's store: close b's app only and leave the store to a.
  afterAll(async () => {
    if (b !== a) await b?.vigil.close();
    await a?.close();
  });

  it('refuses a suppress_days that is not a whole number of days from 0 to 3650, and needs the subjects scope', async () => {
    for (const days of [-1, 3651, 1.5, 'a week', 2 ** 53]) {
      const body = expectError(
        await call(a, privacyKey, 'POST', '/v1/subjects/erase', { identifiers: IDENTIFIERS, suppress_days: days }),
        400,
        'INVALID_REQUEST',
      );
      expect(JSON.stringify(body), String(days)).toMatch(/suppress_days/);
    }
    expect((await call(a, privacyKey, 'GET', '/v1/subjects/jobs')).json().data).toEqual([]);
    expectError(await call(a, acct.secret, 'GET', '/v1/subjects/suppressions'), 403, 'FORBIDDEN');
    expectError(await call(a, acct.secret, 'DELETE', '/v1/subjects/suppressions/p1:AAAAAAAAAAAAAAAAAAAAAA'), 403, 'FORBIDDEN');
    expectError(await call(a, acct.secret, 'DELETE', '/v1/subjects/suppressions', { identifiers: IDENTIFIERS }), 403, 'FORBIDDEN');
  });

  it("drops the erased subject's later events on every instance, stores the rest of a batch, and leaves the other account alone", async () => {
    // The second instance reads the account's (empty) list before the erasure: the erasure's change must reach its copy.
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: BYSTANDER, ip: '203.0.113.7' }])).toEqual(['accepted']);

    const erase = await call(a, privacyKey, 'POST', '/v1/subjects/erase', { identifiers: IDENTIFIERS, suppress_days: 30 });
    expect(erase.statusCode, erase.body).toBe(202);
    expect(erase.json().job.suppress_days).toBe(30);
    const jobId = erase.json().job.id as string;
    await until(async () => (await call(a, privacyKey, 'GET', `/v1/subjects/jobs/${jobId}`)).json().job.status === 'done', 'erasure job done');

    // One row per identifier: its kind, its keyed hash (never the value) and its end.
    const rows = await listed(privacyKey);
    expect(rows.map((r) => r.kind).sort()).toEqual(['actor_id', 'device_id', 'email', 'ip']);
    const secret = accountSecret(MASTER, acct.id);
    expect(rows.map((r) => r.id).sort()).toEqual(IDENTIFIERS.map((i) => pseudonymOf(secret, i.kind as 'ip', i.value)).sort());
    for (const row of rows) expect(row.expires_at).toBe(new Date(a.clock.now() + 30 * DAY_MS).toISOString());
    expect(mentionsSubject(JSON.stringify(rows))).toBe(false);
    const requested = (await a.services.store.audit.list(acct.id, { action: 'subject.erase_requested' }, 10)).items;
    expect(requested.map((e) => e.details.suppress_days)).toEqual([30]);

    const before = await suppressedCount(b);
    // Each identifier alone is enough, in any case of the email and any form of the address; the bystander's event is kept.
    const statuses = await send(b, acct.secret, [
      { event: 'auth.login.failure', actor_id: ACTOR, ip: '203.0.113.7' },
      { event: 'auth.login.failure', actor_id: 'someone-new', email: EMAIL.toUpperCase() },
      { event: 'auth.login.success', actor_id: BYSTANDER, ip: '203.0.113.7' },
      { event: 'auth.login.failure', actor_id: 'someone-else', ip: `::ffff:${IP}` },
      { event: 'auth.login.success', actor_id: 'third-one', metadata: { device_id: DEVICE } },
      { event: 'auth.mfa.disabled', actor_id: ACTOR, ip: IP },
    ]);
    expect(statuses).toEqual(['dropped', 'dropped', 'accepted', 'dropped', 'dropped', 'dropped']);
    const single = await call(b, acct.secret, 'POST', '/v1/events', { event: 'auth.mfa.disabled', actor_id: ACTOR });
    expect(single.statusCode).toBe(202);
    expect(single.json()).toEqual({ status: 'dropped' });
    expect((await suppressedCount(b)) - before).toBe(6);

    // Nothing of the subject is stored, raises an alert or enters detection state; the bystander's events are stored.
    expect(await storedOf(a, acct.secret, `actor_id=${ACTOR}`)).toEqual([]);
    expect(await storedOf(a, acct.secret, 'actor_id=someone-new')).toEqual([]);
    expect(await storedOf(a, acct.secret, `ip=${IP}`)).toEqual([]);
    expect(await storedOf(a, acct.secret, `actor_id=${BYSTANDER}`)).toHaveLength(2);
    expect((await call(a, acct.secret, 'GET', `/v1/alerts?actor_id=${ACTOR}`)).json().data).toEqual([]);
    expect((await stateTexts(b, acct.id)).filter(mentionsSubject)).toEqual([]);
    // The month's usage counts the bystander's two events only.
    expect((await call(a, acct.secret, 'GET', '/v1/usage')).json()).toMatchObject({ used: 2 });

    // Another account's identical identifiers are stored and learned as usual.
    expect(await send(b, other.secret, [{ event: 'auth.mfa.disabled', actor_id: ACTOR, email: EMAIL, ip: IP, metadata: { device_id: DEVICE } }])).toEqual([
      'accepted',
    ]);
    expect(await storedOf(a, other.secret, `actor_id=${ACTOR}`)).toHaveLength(1);
    expect((await call(a, other.secret, 'GET', `/v1/alerts?actor_id=${ACTOR}`)).json().data.length).toBeGreaterThan(0);
    expect((await stateTexts(b, other.id)).some(mentionsSubject)).toBe(true);
    expect((await call(a, other.secret, 'GET', '/v1/subjects/suppressions')).statusCode).toBe(403);
  });

  it('removing an identifier (by id or by value) on one instance stores its events again on the other', async () => {
    const rows = await listed(privacyKey);
    const actorRow = rows.find((r) => r.kind === 'actor_id');
    // The second instance holds the list in force.
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: ACTOR }])).toEqual(['dropped']);

    // Another account cannot see or remove this account's rows.
    const otherKey = (await call(a, other.secret, 'POST', '/v1/keys', { name: 'privacy', scopes: ['subjects'] })).json().key as string;
    expect(await listed(otherKey)).toEqual([]);
    expectError(await call(a, otherKey, 'DELETE', `/v1/subjects/suppressions/${actorRow.id}`), 404, 'NOT_FOUND');
    expect((await call(a, otherKey, 'DELETE', '/v1/subjects/suppressions', { identifiers: IDENTIFIERS })).json()).toEqual({ removed: [] });

    const removed = await call(a, privacyKey, 'DELETE', `/v1/subjects/suppressions/${actorRow.id}`);
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()).toEqual({ removed: [actorRow] });
    expectError(await call(a, privacyKey, 'DELETE', `/v1/subjects/suppressions/${actorRow.id}`), 404, 'NOT_FOUND');
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: ACTOR }])).toEqual(['accepted']);
    expect(await storedOf(a, acct.secret, `actor_id=${ACTOR}`)).toHaveLength(1);
    // The email is still suppressed.
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: 'fourth-one', email: EMAIL }])).toEqual(['dropped']);

    const byValue = await call(a, privacyKey, 'DELETE', '/v1/subjects/suppressions', { identifiers: [{ kind: 'email', value: EMAIL.toLowerCase() }] });
    expect(byValue.statusCode, byValue.body).toBe(200);
    expect(byValue.json().removed.map((r: Json) => r.kind)).toEqual(['email']);
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: 'fourth-one', email: EMAIL }])).toEqual(['accepted']);
    expect((await listed(privacyKey)).map((r) => r.kind).sort()).toEqual(['device_id', 'ip']);

    // Each removal is audited with the row's id and kind, never the value.
    const audit = (await a.services.store.audit.list(acct.id, { action: 'subject.suppression_removed' }, 10)).items;
    expect(audit.map((e) => [e.targetKind, e.targetId, e.details.kind]).reverse()).toEqual([
      ['subject_suppression', actorRow.id, 'actor_id'],
      ['subject_suppression', byValue.json().removed[0].id, 'email'],
    ]);
    expect(mentionsSubject(JSON.stringify(audit))).toBe(false);
  });

  it('an identifier is stored again once its days are over, and retention removes the expired rows', async () => {
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: 'fifth-one', ip: IP }])).toEqual(['dropped']);
    a.clock.advance(30 * DAY_MS - 1);
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: 'fifth-one', ip: IP }])).toEqual(['dropped']);
    a.clock.advance(1);
    expect(await send(b, acct.secret, [{ event: 'auth.login.success', actor_id: 'fifth-one', ip: IP, metadata: { device_id: DEVICE } }])).toEqual(['accepted']);
    expect(await listed(privacyKey)).toEqual([]);
    expect(await a.services.store.subjects.pruneSuppressions(a.clock.now())).toBe(2);
  });
});
