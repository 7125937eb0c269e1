import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_WINDOW_MS } from '../../src/pipeline/dedupe.js';
import type { TestApp } from '../helpers/app.js';
import { allEvents, expectError, postEvent, postRaw, roomyApp, usedThisMonth } from './support.js';

const BATCH = '/v1/events/batch';

describe('idempotent event_id', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await roomyApp();
  });
  afterAll(() => t.close());

  it('the same event_id sent twice answers the same id; stored and counted once', async () => {
    const acct = await t.account('pro');
    const event = { event: 'auth.login.failure', actor_id: 'u1', event_id: 'agent-0001' };
    const first = await postEvent(t, acct.secret, event);
    const second = await postEvent(t, acct.secret, event);
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.json()).toEqual(first.json());
    expect(second.headers['idempotent-replay']).toBe('true');
    expect(first.headers['idempotent-replay']).toBeUndefined();
    expect(await allEvents(t, acct.secret)).toHaveLength(1);
    expect(await usedThisMonth(t, acct.secret)).toBe(1);
  });

  it('a replay answers the first 202 byte for byte, keys in the order the response schema serializer writes, as JSON', async () => {
    const acct = await t.account('pro');
    const event = { event: 'auth.login.failure', actor_id: 'u1', event_id: 'bytes-1', user_agent: 'curl/8.5.0', request: { path: '/login' } };
    const first = await postEvent(t, acct.secret, event);
    const again = await postEvent(t, acct.secret, event);
    expect(again.body).toBe(first.body);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = first.json();
    expect(Object.keys(body)).toEqual(['status', 'id', 'received_at', 'risk', 'tags', 'alerts']);
    expect(Object.keys(body.risk)).toEqual(['score', 'level', 'action', 'breakdown']);
    expect(body.risk.breakdown.length).toBeGreaterThan(0);
    for (const line of body.risk.breakdown) expect(Object.keys(line)).toEqual(['source', 'points']);

    const batch = { events: [event, { event: 'auth.login.success', actor_id: 'u1', event_id: 'bytes-2' }, { event: 'auth.login.success' }] };
    const batchFirst = await postEvent(t, acct.secret, batch, BATCH);
    const batchBody = batchFirst.json();
    expect(Object.keys(batchBody)).toEqual(['status', 'accepted', 'results']);
    expect(batchBody.accepted).toBe(3);
    expect(JSON.stringify(batchBody.results[0])).toBe(first.body);
    expect(batchFirst.headers['content-type']).toBe('application/json; charset=utf-8');
    const batchAgain = await postEvent(t, acct.secret, { events: batch.events.slice(0, 2) }, BATCH);
    expect(batchAgain.body).toBe(
      `{"status":"accepted","accepted":2,"results":[${JSON.stringify(batchBody.results[0])},${JSON.stringify(batchBody.results[1])}]}`,
    );
  });

  it('the same event_id with a different payload is a 409 IDEMPOTENCY_CONFLICT; nothing is stored or counted', async () => {
    const acct = await t.account('pro');
    const first = await postEvent(t, acct.secret, { event: 'auth.login.failure', event_id: 'same', actor_id: 'u1' });
    expect(first.statusCode).toBe(202);
    for (const other of [
      { event: 'data.exported', event_id: 'same', actor_id: 'u1' },
      { event: 'auth.login.failure', event_id: 'same', actor_id: 'u2' },
      { event: 'auth.login.failure', event_id: 'same' },
      { event: 'auth.login.failure', event_id: 'same', actor_id: 'u1', metadata: {} },
    ]) {
      const body = expectError(await postEvent(t, acct.secret, other), 409, 'IDEMPOTENCY_CONFLICT');
      expect(body.message).toContain('event_id "same"');
    }
    // The same JSON value with its keys in another order and other spacing is the same payload.
    const replay = await postRaw(t, acct.secret, '{ "actor_id" : "u1",  "event_id":"same", "event":"auth.login.failure" }');
    expect(replay.statusCode).toBe(202);
    expect(replay.body).toBe(first.body);
    const events = await allEvents(t, acct.secret);
    expect(events.map((e) => e.event)).toEqual(['auth.login.failure']);
    expect(await usedThisMonth(t, acct.secret)).toBe(1);
    const metrics = (await t.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^vigil_events_total\{outcome="rejected_conflict"\} [1-9]/m);
  });

  it('batches answer a conflict per event, beside the other events; repeats within the batch compare too', async () => {
    const acct = await t.account('pro');
    await postEvent(t, acct.secret, { event: 'custom.a.b', event_id: 'b-1' });
    const res = await postEvent(
      t,
      acct.secret,
      {
        events: [
          { event: 'custom.a.b', event_id: 'b-1', actor_id: 'changed' },
          { event: 'custom.a.b', event_id: 'b-2' },
          { event: 'custom.a.b', event_id: 'b-2', actor_id: 'changed' },
          { event: 'custom.a.b', event_id: 'b-2' },
        ],
      },
      BATCH,
    );
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(res.headers['idempotent-replay']).toBeUndefined();
    expect(body.results.map((r: { status: string; error?: string }) => r.error ?? r.status)).toEqual([
      'IDEMPOTENCY_CONFLICT',
      'accepted',
      'IDEMPOTENCY_CONFLICT',
      'accepted',
    ]);
    expect(body.results[0]).toEqual({ status: 'rejected', error: 'IDEMPOTENCY_CONFLICT', message: expect.stringContaining('"b-1"') });
    expect(body.results[3]).toEqual(body.results[1]);
    expect(body.accepted).toBe(2);
    expect(await allEvents(t, acct.secret)).toHaveLength(2);
  });

  it('a concurrent repeat with another payload waits for the first and answers the conflict', async () => {
    const acct = await t.account('pro');
    const [a, b] = await Promise.all([
      postEvent(t, acct.secret, { event: 'custom.race.x', event_id: 'race-conflict' }),
      postEvent(t, acct.secret, { event: 'custom.race.y', event_id: 'race-conflict' }),
    ]);
    expect([a?.statusCode, b?.statusCode].sort()).toEqual([202, 409]);
    expect(await allEvents(t, acct.secret)).toHaveLength(1);
  });

  it('a key stored before payload digests were kept replays its first answer, whatever the payload', async () => {
    const acct = await t.account('pro');
    const response = {
      status: 'accepted',
      id: 'evt_legacy',
      received_at: '2026-01-01T00:00:00.000Z',
      risk: { score: 0, level: 'low', action: 'allow', breakdown: [] },
      tags: [],
      alerts: [],
    };
    await t.services.store.commit({
      events: [],
      alerts: [],
      usage: [],
      idempotency: [{ accountId: acct.id, eventId: 'legacy-key', response, createdAt: t.clock.now(), payloadDigest: null }],
    });
    const res = await postEvent(t, acct.secret, { event: 'custom.any.thing', event_id: 'legacy-key' });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual(response);
  });

  it('concurrent duplicates: one stored event, one count, every answer the same id', async () => {
    const acct = await t.account('pro');
    const event = { event: 'auth.login.failure', event_id: 'race-1' };
    const answers = await Promise.all(Array.from({ length: 12 }, () => postEvent(t, acct.secret, event)));
    for (const a of answers) expect(a.statusCode).toBe(202);
    const ids = new Set(answers.map((a) => a.json().id));
    expect(ids.size).toBe(1);
    expect(await allEvents(t, acct.secret)).toHaveLength(1);
    expect(await usedThisMonth(t, acct.secret)).toBe(1);
  });

  it('concurrent batches sharing event_ids store each event_id once', async () => {
    const acct = await t.account('pro');
    const batch = (offset: number) => ({ events: Array.from({ length: 10 }, (_, i) => ({ event: 'custom.sync.item', event_id: `item-${i + offset}` })) });
    const answers = await Promise.all([
      postEvent(t, acct.secret, batch(0), BATCH),
      postEvent(t, acct.secret, batch(5), BATCH),
      postEvent(t, acct.secret, batch(0), BATCH),
    ]);
    for (const a of answers) expect(a.statusCode).toBe(202);
    const stored = await allEvents(t, acct.secret);
    expect(stored).toHaveLength(15);
    expect(new Set(stored.map((e) => e.event_id)).size).toBe(15);
    expect(await usedThisMonth(t, acct.secret)).toBe(15);
    const eventIdOf = new Map(stored.map((e) => [e.id, e.event_id]));
    for (const [n, a] of answers.entries()) {
      const offset = n === 1 ? 5 : 0;
      const results = a.json().results as { id: string }[];
      expect(results.map((r) => eventIdOf.get(r.id))).toEqual(Array.from({ length: 10 }, (_, i) => `item-${i + offset}`));
    }
    // The overlapping event_ids got one id each, whichever request stored them.
    expect(answers[0]?.json().results).toEqual(answers[2]?.json().results);
  });

  it('concurrent batches sharing event_ids in opposite orders both answer: no request waits for another while holding ids of its own', async () => {
    const acct = await t.account('pro');
    const ids = Array.from({ length: 20 }, (_, i) => `crossed-${i}`);
    const batch = (order: string[]) => ({ events: order.map((id) => ({ event: 'custom.sync.item', event_id: id })) });
    const answers = await Promise.all([postEvent(t, acct.secret, batch(ids), BATCH), postEvent(t, acct.secret, batch([...ids].reverse()), BATCH)]);
    for (const a of answers) expect(a.statusCode).toBe(202);
    const [forward, backward] = answers.map((a) => a.json().results as { id: string }[]);
    expect(backward?.map((r) => r.id).reverse()).toEqual(forward?.map((r) => r.id));
    expect(await allEvents(t, acct.secret)).toHaveLength(20);
    expect(await usedThisMonth(t, acct.secret)).toBe(20);
  }, 15_000);

  it('within one batch: the repeat answers the first occurrence and is not stored again', async () => {
    const acct = await t.account('pro');
    const res = await postEvent(
      t,
      acct.secret,
      { events: [{ event: 'custom.a.b', event_id: 'dup' }, { event: 'custom.c.d' }, { event: 'custom.a.b', event_id: 'dup' }] },
      BATCH,
    );
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.results).toHaveLength(3);
    expect(body.results[2]).toEqual(body.results[0]);
    expect(body.results[1].id).not.toBe(body.results[0].id);
    expect(body.accepted).toBe(body.results.filter((r: { status: string }) => r.status === 'accepted').length);
    expect(await allEvents(t, acct.secret)).toHaveLength(2);
    expect(await usedThisMonth(t, acct.secret)).toBe(2);
  });

  it('a batch repeating a single event sent earlier answers its first result', async () => {
    const acct = await t.account('pro');
    const single = await postEvent(t, acct.secret, { event: 'custom.a.b', event_id: 'early' });
    const res = await postEvent(
      t,
      acct.secret,
      {
        events: [
          { event: 'custom.a.b', event_id: 'early' },
          { event: 'custom.a.b', event_id: 'late' },
        ],
      },
      BATCH,
    );
    expect(res.json().results[0]).toEqual(single.json());
    expect(await allEvents(t, acct.secret)).toHaveLength(2);
    expect(await usedThisMonth(t, acct.secret)).toBe(2);
  });

  it('different accounts with the same event_id are independent', async () => {
    const a = await t.account('pro');
    const b = await t.account('pro');
    const event = { event: 'auth.login', event_id: 'shared-id' };
    const ra = await postEvent(t, a.secret, event);
    const rb = await postEvent(t, b.secret, event);
    expect(ra.json().id).not.toBe(rb.json().id);
    expect(await allEvents(t, a.secret)).toHaveLength(1);
    expect(await allEvents(t, b.secret)).toHaveLength(1);
    expect(await usedThisMonth(t, b.secret)).toBe(1);
  });

  it('the two keys of one account share event_ids', async () => {
    const acct = await t.account('pro');
    const first = await postEvent(t, acct.secret, { event: 'auth.login', event_id: 'k' });
    const second = await postEvent(t, acct.publishable, { event: 'auth.login', event_id: 'k' });
    expect(second.json().id).toBe(first.json().id);
  });

  it('after 7 days the same event_id is a new event', async () => {
    const acct = await t.account('pro');
    const event = { event: 'auth.login', event_id: 'weekly' };
    const first = await postEvent(t, acct.secret, event);
    t.clock.advance(IDEMPOTENCY_WINDOW_MS - 1000);
    const within = await postEvent(t, acct.secret, event);
    expect(within.json().id).toBe(first.json().id);
    t.clock.advance(2000);
    const after = await postEvent(t, acct.secret, event);
    expect(after.statusCode).toBe(202);
    expect(after.json().id).not.toBe(first.json().id);
    expect(await allEvents(t, acct.secret)).toHaveLength(2);
    expect(await usedThisMonth(t, acct.secret)).toBe(2);
    // ...and the new one is what a further repeat answers.
    expect((await postEvent(t, acct.secret, event)).json().id).toBe(after.json().id);
  });

  it('a Free event dropped over the cap is answered as dropped on repeat, and not counted again', async () => {
    const acct = await t.account('free');
    // Reach the Free cap (2,500) through the quota counter itself, as the pipeline does.
    await t.services.quota.reserve(acct.id, new Date(t.clock.now()).toISOString().slice(0, 7), 2_500, { monthlyCap: 2_500, overage: 'drop' });
    const first = await postEvent(t, acct.secret, { event: 'auth.login', event_id: 'over-cap' });
    expect(first.json()).toEqual({ status: 'dropped' });
    const again = await postEvent(t, acct.secret, { event: 'auth.login', event_id: 'over-cap' });
    expect(again.json()).toEqual({ status: 'dropped' });
    expect(await allEvents(t, acct.secret)).toHaveLength(0);
  });
});
