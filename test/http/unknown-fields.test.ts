import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { expectError, getJson, postEvent, roomyApp } from './support.js';

interface Warning {
  field: string;
  kept_in: string;
  did_you_mean?: string;
  message: string;
}

/** The value of the Prometheus sample `name{family="…"}`. */
function familyCount(metrics: string, family: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`vigil_unknown_fields_total{family="${family}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('unknown event fields: kept in metadata.extra and named in warnings', () => {
  let t: TestApp;
  let secret: string;
  beforeAll(async () => {
    t = await roomyApp();
    secret = (await t.account('pro')).secret;
  });
  afterAll(() => t.close());

  const metrics = async () => (await t.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;

  it('camelCase and synonyms of top-level fields: 202, each field warned once with the field it meant', async () => {
    const before = await metrics();
    const res = await postEvent(t, secret, { event: 'auth.login.failure', actorId: 'x', ipAddress: '203.0.113.9', userAgent: 'sqlmap/1.7', colour: 'blue' });
    expect(res.statusCode).toBe(202);
    const warnings = res.json().warnings as Warning[];
    expect(warnings.map((w) => [w.field, w.kept_in, w.did_you_mean])).toEqual([
      ['actorId', 'metadata.extra.actorId', 'actor_id'],
      ['ipAddress', 'metadata.extra.ipAddress', 'ip'],
      ['userAgent', 'metadata.extra.userAgent', 'user_agent'],
      ['colour', 'metadata.extra.colour', undefined],
    ]);
    expect(warnings[0]?.message).toBe('actorId is not an event field; it was kept in metadata.extra.actorId. Did you mean actor_id?');
    const stored = (await getJson(t, secret, `/v1/events/${res.json().id}`)).json();
    expect(stored.metadata.extra).toEqual({ actorId: 'x', ipAddress: '203.0.113.9', userAgent: 'sqlmap/1.7', colour: 'blue' });
    expect(stored.actor_id).toBeUndefined();
    const after = await metrics();
    for (const family of ['actor_id', 'ip', 'user_agent', 'unrecognised']) expect(familyCount(after, family) - familyCount(before, family)).toBe(1);
  });

  it('flat path, method and status point to request.*; snake_case variants and typos are recognised too', async () => {
    const res = await postEvent(t, secret, { event: 'api.request', path: '/login', method: 'POST', status: 401, session: 's1', emial: 'a@b.c' });
    expect(res.statusCode).toBe(202);
    expect((res.json().warnings as Warning[]).map((w) => [w.field, w.did_you_mean])).toEqual([
      ['path', 'request.path'],
      ['method', 'request.method'],
      ['status', 'request.status'],
      ['session', 'session_id'],
      ['emial', 'email'],
    ]);
  });

  it('unknown members of request follow the same rule: kept in metadata.extra.request, warned', async () => {
    const res = await postEvent(t, secret, {
      event: 'api.request',
      request: { path: '/x', status_code: 404, url: '/y' },
      metadata: { extra: { mine: 1 } },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json().warnings as Warning[]).toEqual([
      {
        field: 'request.status_code',
        kept_in: 'metadata.extra.request.status_code',
        did_you_mean: 'request.status',
        message: 'request.status_code is not an event field; it was kept in metadata.extra.request.status_code. Did you mean request.status?',
      },
      expect.objectContaining({ field: 'request.url', did_you_mean: 'request.path' }),
    ]);
    const stored = (await getJson(t, secret, `/v1/events/${res.json().id}`)).json();
    expect(stored.request).toEqual({ path: '/x' });
    expect(stored.metadata).toEqual({ extra: { mine: 1, request: { status_code: 404, url: '/y' } } });
  });

  it('free-form metadata has no unknown fields, and an event without unknown fields has no warnings member', async () => {
    const res = await postEvent(t, secret, { event: 'auth.login', actor_id: 'u', metadata: { actorId: 'y', nested: { whatever: 1 } } });
    expect(res.statusCode).toBe(202);
    expect(res.json()).not.toHaveProperty('warnings');
  });

  it('a batch answers warnings per event, at the event index', async () => {
    const res = await postEvent(t, secret, { events: [{ event: 'auth.login' }, { event: 'auth.login', userId: 'u1' }] }, '/v1/events/batch');
    expect(res.statusCode).toBe(202);
    const results = res.json().results as { warnings?: Warning[] }[];
    expect(results[0]).not.toHaveProperty('warnings');
    expect(results[1]?.warnings).toEqual([expect.objectContaining({ field: 'userId', did_you_mean: 'actor_id' })]);
  });

  it('a replay answers the warnings of the request that sent them', async () => {
    const first = await postEvent(t, secret, { event: 'auth.login', event_id: 'uf-replay', actorID: 'a' });
    const replay = await postEvent(t, secret, { event: 'auth.login', event_id: 'uf-replay', actorID: 'a' });
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(replay.json().warnings[0]).toMatchObject({ field: 'actorID', did_you_mean: 'actor_id' });
  });

  it('a name already in metadata.extra: both values are kept, the unknown field under the next free name', async () => {
    const res = await postEvent(t, secret, {
      event: 'auth.login',
      colour: 'from-top-level',
      request: { path: '/x', status_code: 404 },
      metadata: { extra: { colour: 'from-metadata', 'colour~2': 'also-mine', request: { status_code: 'mine' } } },
    });
    expect(res.statusCode).toBe(202);
    expect((res.json().warnings as Warning[]).map((w) => [w.field, w.kept_in])).toEqual([
      ['colour', 'metadata.extra.colour~3'],
      ['request.status_code', 'metadata.extra.request.status_code~2'],
    ]);
    expect((res.json().warnings as Warning[])[0]?.message).toBe(
      'colour is not an event field; metadata.extra.colour was already set, so it was kept in metadata.extra.colour~3',
    );
    const stored = (await getJson(t, secret, `/v1/events/${res.json().id}`)).json();
    expect(stored.metadata.extra).toEqual({
      colour: 'from-metadata',
      'colour~2': 'also-mine',
      'colour~3': 'from-top-level',
      request: { status_code: 'mine', 'status_code~2': 404 },
    });
  });

  it('a batch of 100 events each with a 10,000-character unknown name: 400 naming each field, shortened', async () => {
    const name = (i: number) => `k${String(i).padStart(3, '0')}${'x'.repeat(9_996)}`;
    const events = Array.from({ length: 100 }, (_, i) => ({ event: 'auth.login', [name(i)]: 1 }));
    const body = expectError(await postEvent(t, secret, { events }, '/v1/events/batch'), 400, 'INVALID_EVENT');
    expect(body.details).toHaveLength(100);
    expect(body.details?.[7]).toEqual({
      index: 7,
      field: `${name(7).slice(0, 64)}…`,
      message: `field names must be at most 100 characters; ${name(7).slice(0, 64)}… has 10000 (put long names inside metadata)`,
    });
    expect(String(body.message).length).toBeLessThan(400);
  });

  it('a single event with a 60,000-character unknown name, at the top level or in request: 400', async () => {
    for (const [event, field] of [
      [{ event: 'auth.login', ['y'.repeat(60_000)]: 1 }, `${'y'.repeat(64)}…`],
      [{ event: 'auth.login', request: { ['z'.repeat(60_000)]: 1 } }, `request.${'z'.repeat(64)}…`],
    ] as const) {
      const body = expectError(await postEvent(t, secret, event), 400, 'INVALID_EVENT');
      expect(body.details?.map((d) => d.field)).toEqual([field]);
    }
  });

  it('a name of exactly 100 characters is still an unknown field, kept and warned', async () => {
    const res = await postEvent(t, secret, { event: 'auth.login', ['n'.repeat(100)]: 1 });
    expect(res.statusCode).toBe(202);
    expect(res.json().warnings[0].field).toBe('n'.repeat(100));
  });

  it('the OpenAPI document describes warnings in the 202 answer', async () => {
    const doc = (await t.vigil.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(JSON.stringify(doc.paths['/v1/events'].post.responses['202'])).toContain('did_you_mean');
  });
});
