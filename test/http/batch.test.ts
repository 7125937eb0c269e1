import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { allEvents, expectError, getJson, postEvent, postRaw, roomyApp, usedThisMonth } from './support.js';

const BATCH = '/v1/events/batch';

describe('POST /v1/events/batch', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await roomyApp();
  });
  afterAll(() => t.close());

  it('answers one result per event, in order, with the accepted count', async () => {
    const acct = await t.account('starter');
    const types = ['auth.login.failure', 'custom.step.one', 'data.exported', 'custom.step.two', 'api.request'];
    const res = await postEvent(t, acct.secret, { events: types.map((event, i) => ({ event, actor_id: `actor-${i}` })) }, BATCH);
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.status).toBe('accepted');
    expect(body.accepted).toBe(5);
    expect(body.results).toHaveLength(5);
    for (let i = 0; i < types.length; i++) {
      const result = body.results[i];
      expect(result.status).toBe('accepted');
      const stored = (await getJson(t, acct.secret, `/v1/events/${result.id}`)).json();
      expect(stored.event).toBe(types[i]);
      expect(stored.actor_id).toBe(`actor-${i}`);
    }
    expect(new Set(body.results.map((r: { id: string }) => r.id)).size).toBe(5);
    expect(await usedThisMonth(t, acct.secret)).toBe(5);
  });

  it('is all or nothing: invalid events anywhere reject the batch with per-index details', async () => {
    const acct = await t.account('pro');
    const events = [{ event: 'auth.login' }, { event: 'Bad' }, { event: 'auth.login', ip: 'nope' }, { event: 'auth.login' }, { actor_id: 'no type' }];
    const body = expectError(await postEvent(t, acct.secret, { events }, BATCH), 400, 'INVALID_EVENT');
    expect(body.details?.map((d) => [d.index, d.field])).toEqual([
      [1, 'event'],
      [2, 'ip'],
      [4, 'event'],
    ]);
    for (const d of body.details ?? []) expect(d.message.length).toBeGreaterThan(0);
    expect(body.message).toMatch(/event 1/);
    expect(await allEvents(t, acct.secret)).toHaveLength(0);
    expect(await usedThisMonth(t, acct.secret)).toBe(0);
  });

  it('a non-object event in the batch is reported by index', async () => {
    const acct = await t.account('pro');
    const body = expectError(await postEvent(t, acct.secret, { events: [{ event: 'auth.login' }, 'auth.login', null] }, BATCH), 400, 'INVALID_EVENT');
    expect(body.details?.map((d) => d.index)).toEqual([1, 2]);
  });

  it.each([
    ['an array', '[{"event":"auth.login"}]'],
    ['events not an array', '{"events":{"event":"auth.login"}}'],
    ['no events field', '{"event":"auth.login"}'],
    ['an unknown field beside events', '{"events":[{"event":"auth.login"}],"extra":1}'],
  ])('a body that is %s is INVALID_EVENT', async (_name, body) => {
    const acct = await t.account('pro');
    expectError(await postRaw(t, acct.secret, body, 'application/json', BATCH), 400, 'INVALID_EVENT');
    expect(await usedThisMonth(t, acct.secret)).toBe(0);
  });

  it('each event of a batch counts toward the per-minute window', async () => {
    const acct = await t.account('starter');
    const res = await postEvent(t, acct.secret, { events: Array.from({ length: 7 }, () => ({ event: 'custom.x.y' })) }, BATCH);
    expect(res.statusCode).toBe(202);
    const limit = Number(res.headers['x-ratelimit-limit']);
    expect(Number(res.headers['x-ratelimit-remaining'])).toBe(limit - 7);
  });

  it('Free: 403 PLAN_UPGRADE_REQUIRED (the upgrade path is in admin.test.ts)', async () => {
    const acct = await t.account('free');
    expectError(await postEvent(t, acct.secret, { events: [{ event: 'auth.login' }] }, BATCH), 403, 'PLAN_UPGRADE_REQUIRED');
  });
});
