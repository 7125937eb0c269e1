import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, testApp, type TestApp } from '../helpers/app.js';

describe('GET/PATCH /v1/settings', () => {
  let t: TestApp;
  let keys: { secret: string; publishable: string };
  beforeAll(async () => {
    t = await testApp();
    keys = await t.account('pro');
  });
  afterAll(() => t.close());

  const patch = (payload: unknown) => t.vigil.app.inject({ method: 'PATCH', url: '/v1/settings', headers: bearer(keys.secret), payload: payload as object });
  const send = (payload: object) => t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(keys.secret), payload });

  it('shows defaults, then applies changed risk thresholds to the next event at once', async () => {
    const before = await t.vigil.app.inject({ method: 'GET', url: '/v1/settings', headers: bearer(keys.secret) });
    expect(before.statusCode).toBe(200);
    expect(before.json().effective.risk).toEqual({ challenge: 50, block: 80 });
    expect(before.json().defaults.detectors.brute_force).toBeDefined();

    // api.unauthorized has base score 12 and raises nothing on its own: "allow" by default.
    const first = (await send({ event: 'api.unauthorized', actor_id: 'u1' })).json().risk;
    expect(first).toMatchObject({ score: 12, action: 'allow' });
    const res = await patch({ risk: { challenge: 5, block: 12 } });
    expect(res.statusCode).toBe(200);
    expect(res.json().effective.risk).toEqual({ challenge: 5, block: 12 });
    expect((await send({ event: 'api.unauthorized', actor_id: 'u1' })).json().risk).toMatchObject({ score: 12, action: 'block' });

    const reset = await patch({ risk: null });
    expect(reset.json().effective.risk).toEqual({ challenge: 50, block: 80 });
  });

  it('rejects bad settings with exact errors and changes nothing', async () => {
    const bad = await patch({ risk: { challenge: 90, block: 80 }, colour: 'blue' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('INVALID_REQUEST');
    const fields = bad.json().details.map((d: { field: string }) => d.field);
    expect(fields).toContain('colour');
    expect(fields).toContain('risk.challenge');
    const now = await t.vigil.app.inject({ method: 'GET', url: '/v1/settings', headers: bearer(keys.secret) });
    expect(now.json().risk).toEqual({});
    expect((await patch({ allowlists: { ips: [{ value: 'not-an-ip', detectors: ['impossible_travel'] }] } })).statusCode).toBe(400);
  });

  it('stores an allowlist, and a publishable key cannot read or change settings', async () => {
    const ok = await patch({ allowlists: { ips: [{ value: '10.0.0.0/8', detectors: ['impossible_travel'] }] } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().allowlists.ips).toHaveLength(1);
    const pub = await t.vigil.app.inject({ method: 'GET', url: '/v1/settings', headers: bearer(keys.publishable) });
    expect(pub.statusCode).toBe(403);
  });
});
