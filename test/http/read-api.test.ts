import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRow } from '../../src/storage/types.js';
import { newId } from '../../src/util/ids.js';
import type { TestApp } from '../helpers/app.js';
import { allEvents, expectError, getJson, postEvent, roomyApp } from './support.js';

const HOUR = 3_600_000;

describe('read API: GET /v1/events filters and cursor pagination', () => {
  let t: TestApp;
  let acct: { id: string; secret: string; publishable: string };
  const sent: { id: string; event: string; actor_id: string; ip: string; ts: number }[] = [];
  let base: number;

  beforeAll(async () => {
    t = await roomyApp();
    acct = await t.account('pro');
    base = t.clock.now() - 48 * HOUR;
    const types = ['auth.login.failure', 'auth.login.success', 'auth.mfa.disabled', 'data.exported', 'custom.billing.refund'];
    for (let i = 0; i < 37; i++) {
      const e = { event: types[i % types.length] as string, actor_id: `actor-${i % 4}`, ip: `198.51.100.${i % 3}`, ts: base + i * HOUR };
      const res = await postEvent(t, acct.secret, { event: e.event, actor_id: e.actor_id, ip: e.ip, timestamp: e.ts });
      expect(res.statusCode).toBe(202);
      sent.push({ ...e, id: res.json().id });
    }
  });
  afterAll(() => t.close());

  const idsOf = (list: Record<string, unknown>[]) => list.map((e) => e.id as string).sort();
  const expected = (pred: (e: (typeof sent)[number]) => boolean) =>
    sent
      .filter(pred)
      .map((e) => e.id)
      .sort();

  it('pages cover every event exactly once, newest first', async () => {
    for (const limit of [1, 5, 10, 36, 37, 50]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await getJson(t, acct.secret, `/v1/events?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body.data.length).toBeLessThanOrEqual(limit);
        seen.push(...body.data.map((e: { id: string }) => e.id));
        cursor = body.next_cursor;
        pages++;
      } while (cursor && pages < 100);
      expect(pages).toBe(Math.ceil(37 / limit));
      expect(seen).toHaveLength(37);
      expect(new Set(seen).size).toBe(37);
      expect(seen).toEqual([...seen].sort().reverse());
    }
  });

  it('events arriving between pages do not disturb the walk', async () => {
    const first = (await getJson(t, acct.secret, '/v1/events?limit=10')).json();
    const late = await postEvent(t, acct.secret, { event: 'custom.late.arrival' });
    const rest = await allEvents(t, acct.secret, `cursor=${first.next_cursor}`);
    const walked = [...first.data, ...rest].map((e: { id: string }) => e.id);
    expect(walked).not.toContain(late.json().id);
    expect(new Set(walked).size).toBe(37);
    sent.push({ id: late.json().id, event: 'custom.late.arrival', actor_id: '', ip: '', ts: t.clock.now() });
  });

  it('filter: exact type', async () => {
    expect(idsOf(await allEvents(t, acct.secret, 'type=auth.login.failure'))).toEqual(expected((e) => e.event === 'auth.login.failure'));
  });

  it('filter: type prefix with .* and with prefix=', async () => {
    expect(idsOf(await allEvents(t, acct.secret, 'type=auth.*'))).toEqual(expected((e) => e.event.startsWith('auth.')));
    expect(idsOf(await allEvents(t, acct.secret, 'prefix=auth.login'))).toEqual(expected((e) => e.event.startsWith('auth.login')));
  });

  it('filter: a prefix with LIKE wildcards matches literally', async () => {
    expect(await allEvents(t, acct.secret, 'prefix=auth_')).toHaveLength(0);
    expect(await allEvents(t, acct.secret, 'prefix=%25')).toHaveLength(0);
  });

  it('filter: actor_id and ip, combined', async () => {
    expect(idsOf(await allEvents(t, acct.secret, 'actor_id=actor-1'))).toEqual(expected((e) => e.actor_id === 'actor-1'));
    expect(idsOf(await allEvents(t, acct.secret, 'ip=198.51.100.2'))).toEqual(expected((e) => e.ip === '198.51.100.2'));
    expect(idsOf(await allEvents(t, acct.secret, 'actor_id=actor-1&ip=198.51.100.2&type=auth.*'))).toEqual(
      expected((e) => e.actor_id === 'actor-1' && e.ip === '198.51.100.2' && e.event.startsWith('auth.')),
    );
  });

  it('filter: since (inclusive) and until (exclusive), ISO or Unix ms', async () => {
    const since = base + 10 * HOUR;
    const until = base + 20 * HOUR;
    const want = expected((e) => e.ts >= since && e.ts < until);
    expect(want).toHaveLength(10);
    expect(idsOf(await allEvents(t, acct.secret, `since=${since}&until=${until}`))).toEqual(want);
    const iso = `since=${encodeURIComponent(new Date(since).toISOString())}&until=${encodeURIComponent(new Date(until).toISOString())}`;
    expect(idsOf(await allEvents(t, acct.secret, iso))).toEqual(want);
  });

  // Scoped to their own type: the events sent above score by real detectors.
  it('filter: min_risk and tag', async () => {
    const now = t.clock.now();
    const row = (score: number, tags: string[]): EventRow => {
      const id = newId('evt', now);
      return {
        id,
        accountId: acct.id,
        type: 'custom.scored.x',
        eventId: null,
        occurredAt: now,
        receivedAt: now,
        actorId: null,
        ip: null,
        riskScore: score,
        tags,
        doc: { id, event: 'custom.scored.x' },
      };
    };
    const rows = [row(10, []), row(55, ['inferred:auth.failure']), row(90, ['inferred:auth.failure', 'inferred:rate.limited'])];
    await t.services.store.commit({ events: rows, alerts: [], usage: [], idempotency: [] });
    const ids = (list: Record<string, unknown>[]) => list.map((e) => e.id).sort();
    expect(ids(await allEvents(t, acct.secret, 'min_risk=50&type=custom.scored.x'))).toEqual([rows[1]?.id, rows[2]?.id].sort());
    expect(ids(await allEvents(t, acct.secret, 'min_risk=90&type=custom.scored.x'))).toEqual([rows[2]?.id]);
    expect(ids(await allEvents(t, acct.secret, 'tag=inferred:auth.failure&type=custom.scored.x'))).toEqual([rows[1]?.id, rows[2]?.id].sort());
    expect(ids(await allEvents(t, acct.secret, 'tag=inferred:rate.limited&type=custom.scored.x'))).toEqual([rows[2]?.id]);
    expect(await allEvents(t, acct.secret, 'tag=inferred:auth&type=custom.scored.x')).toHaveLength(0);
  });

  it('GET /v1/events/{id} returns the stored document with its risk', async () => {
    const one = sent[3] as (typeof sent)[number];
    const res = await getJson(t, acct.secret, `/v1/events/${one.id}`);
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc).toMatchObject({ id: one.id, event: one.event, actor_id: one.actor_id, ip: one.ip, timestamp: new Date(one.ts).toISOString() });
    expect(doc.risk).toMatchObject({ score: expect.any(Number), level: expect.any(String), action: expect.any(String) });
  });

  it.each([['limit=0'], ['limit=501'], ['limit=abc'], ['min_risk=101'], ['min_risk=-1'], ['since=yesterday'], ['until=2026-99-99'], ['unknown_filter=1']])(
    'bad query %s: 400 with the error shape',
    async (query) => {
      const res = await getJson(t, acct.secret, `/v1/events?${query}`);
      expect(res.statusCode).toBe(400);
      expectError(res, 400, res.json().error);
    },
  );

  it.each([
    ['/v1/events', 'min_risk', '1e400', 'min_risk must be an integer from 0 to 100'],
    ['/v1/events', 'min_risk', '-1e400', 'min_risk must be an integer from 0 to 100'],
    ['/v1/events', 'min_risk', 'Infinity', 'min_risk must be an integer from 0 to 100'],
    ['/v1/events', 'min_risk', '9007199254740993', 'min_risk must be an integer from 0 to 100'],
    ['/v1/events', 'limit', '1e400', 'limit must be an integer from 1 to 500'],
    ['/v1/events', 'limit', '-Infinity', 'limit must be an integer from 1 to 500'],
    ['/v1/alerts', 'limit', '1e400', 'limit must be an integer from 1 to 500'],
  ])('%s?%s=%s, a number no range holds: 400 naming the parameter and its range, before any query', async (path, field, value, message) => {
    const store = t.services.store;
    const before = { events: store.events.listEvents, alerts: store.alerts.listAlerts };
    let queried = 0;
    store.events.listEvents = (...args) => (queried++, before.events.apply(store, args));
    store.alerts.listAlerts = (...args) => (queried++, before.alerts.apply(store, args));
    try {
      const body = expectError(await getJson(t, acct.secret, `${path}?${field}=${value}`), 400, 'INVALID_REQUEST');
      expect(body).toMatchObject({ message, details: [{ field, message }] });
    } finally {
      store.events.listEvents = before.events;
      store.alerts.listAlerts = before.alerts;
    }
    expect(queried).toBe(0);
  });

  it('min_risk at both ends of its range is a filter, not an error', async () => {
    for (const value of ['0', '100', '1e2']) expect((await getJson(t, acct.secret, `/v1/events?min_risk=${value}`)).statusCode, `min_risk=${value}`).toBe(200);
  });

  it('GET /v1/usage reports the month', async () => {
    const body = (await getJson(t, acct.secret, '/v1/usage')).json();
    expect(body).toMatchObject({ plan: 'pro', used: 38, cap: 100_000, remaining: 100_000 - 38, dropped: 0 });
    expect(body.period).toEqual({ start: '2026-01-01T00:00:00.000Z', end: '2026-02-01T00:00:00.000Z' });
  });

  it('GET /v1/catalog answers with any valid key', async () => {
    expect((await getJson(t, acct.secret, '/v1/catalog')).statusCode).toBe(200);
    expect((await getJson(t, acct.publishable, '/v1/catalog')).statusCode).toBe(200);
  });
});
