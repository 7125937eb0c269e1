import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { expectError, roomyApp } from './support.js';

/** Every time the API reads (event timestamp, list filters, dry-run range) takes the same forms (docs/reference/api.md). */
describe('times in events, list filters and dry runs', () => {
  let t: TestApp;
  let key: string;
  let now: number;
  let earlier: number;
  let iso: string;
  beforeAll(async () => {
    t = await roomyApp();
    now = t.clock.now();
    earlier = now - 60_000;
    iso = new Date(earlier).toISOString();
    key = (await t.account('pro')).secret;
  });
  afterAll(() => t.close());

  const inject = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload: payload as object }) });
  const model = { name: 'x', match: { event: 'custom.time' }, outcome: { alert: 'custom.time', severity: 'low' } };
  const dryRun = (from: unknown) => inject('POST', '/v1/threat-models/test', { model, from, to: now + 60_000 });

  it('takes ISO 8601 text and Unix milliseconds in each of them', async () => {
    for (const timestamp of [iso, earlier]) {
      const res = await inject('POST', '/v1/events', { event: 'custom.time', actor_id: 'u1', timestamp });
      expect(res.statusCode, res.body).toBe(202);
    }
    for (const since of [iso, String(earlier)]) {
      const list = await inject('GET', `/v1/events?since=${encodeURIComponent(since)}`);
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json().data).toHaveLength(2);
    }
    for (const from of [iso, earlier]) {
      const dry = await dryRun(from);
      expect(dry.statusCode, dry.body).toBe(200);
      expect(dry.json()).toMatchObject({ scanned: 2 });
    }
  });

  it('refuses date text in other forms in each of them', async () => {
    const other = new Date(earlier).toUTCString();
    expectError(await inject('POST', '/v1/events', { event: 'custom.time', timestamp: other }), 400, 'INVALID_EVENT');
    const list = expectError(await inject('GET', `/v1/events?since=${encodeURIComponent(other)}`), 400, 'INVALID_REQUEST');
    expect(list.details).toEqual([{ field: 'since', message: 'not a time' }]);
    const dry = expectError(await dryRun(other), 400, 'INVALID_REQUEST');
    expect(dry).toMatchObject({ message: 'from must be an ISO 8601 date-time or Unix milliseconds', details: [{ field: 'from', message: 'not a time' }] });
  });

  it('checks the rest of a dry run body by its schema: a model or an id, and no other member', async () => {
    const shape = 'send {"model": ...} or {"id": "tm_…"}, with optional "from", "to" and "cursor"';
    expect(expectError(await inject('POST', '/v1/threat-models/test', [model]), 400, 'INVALID_REQUEST').message).toBe(shape);
    expect(expectError(await inject('POST', '/v1/threat-models/test', { from: earlier }), 400, 'INVALID_REQUEST').message).toBe(shape);
    expect(expectError(await inject('POST', '/v1/threat-models/test', { model, id: 'tm_x' }), 400, 'INVALID_REQUEST').message).toBe(shape);
    const extra = expectError(await inject('POST', '/v1/threat-models/test', { model, colour: 'red' }), 400, 'INVALID_REQUEST');
    expect(extra.details).toEqual([{ field: 'colour', message: 'colour is not allowed here (allowed: model, id, from, to, cursor)' }]);
    const id = expectError(await inject('POST', '/v1/threat-models/test', { id: 5 }), 400, 'INVALID_REQUEST');
    expect(id.details).toEqual([{ field: 'id', message: 'id must be a string' }]);
  });
});
