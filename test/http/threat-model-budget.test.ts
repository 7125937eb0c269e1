/**
 * Threat models over their evaluation budget, through the real routes: embedded (SQLite, one
 * instance, in-memory state) and scale-out (PostgreSQL and Redis, two instances sharing them).
 * The suspension policy asks for fewer events than the default so that a model is suspended
 * within a few dozen requests; what suspends it is events that run out of their work budget,
 * which is counted, not timed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, SCALE_OUT, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { roomyApp } from './support.js';

// The time budget is fifty times the default so that a loaded test machine's pauses (a whole test
// suite on two cores) never read as a model's cost; the events that run out of their work budget
// count for ten times that each.
const POLICY = { minEvents: 10, minRequests: 10, eventMicros: 50_000, exhaustedEventMicros: 500_000 };
const HEAVY_REGEX = '(?s)a.{0,998}[0-9]';

type Key = { id: string; secret: string };
type ModelView = { id: string; version: number; enabled: boolean; suspended: null | { at: string; reason: string } };

describe('threat models over their evaluation budget', () => {
  let a: TestApp;
  /** A second instance on the same store and Redis in scale-out mode; the same app embedded. */
  let b: TestApp;

  beforeAll(async () => {
    a = await roomyApp({}, { threatModelBudget: POLICY });
    if (SCALE_OUT) {
      const redis = { VIGIL_REDIS_URL: a.config.redisUrl as string, VIGIL_REDIS_PREFIX: a.config.redisPrefix };
      b = await roomyApp(redis, { store: a.services.store, clock: a.clock, threatModelBudget: POLICY });
      for (const t of [a, b]) await until(() => t.services.redisHealth?.degraded === false, 'Redis connected');
    } else b = a;
  });
  // b shares a's store: close b's app only and leave the store to a.
  afterAll(async () => {
    if (b !== a) await b?.vigil.close();
    await a?.close();
  });

  const call = (t: TestApp, key: Key, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    t.vigil.app.inject({ method, url, headers: bearer(key.secret), ...(payload === undefined ? {} : { payload: payload as object }) });
  const create = async (key: Key, body: unknown): Promise<ModelView> => {
    const res = await call(a, key, 'POST', '/v1/threat-models', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as ModelView;
  };
  const modelOn = async (t: TestApp, key: Key, id: string): Promise<ModelView> => {
    const res = await call(t, key, 'GET', `/v1/threat-models/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as ModelView;
  };
  const alertsOn = async (t: TestApp, key: Key, metadata: Record<string, unknown>): Promise<string[]> => {
    const res = await call(t, key, 'POST', '/v1/events', { event: 'custom.probe', actor_id: 'u1', metadata });
    expect(res.statusCode, res.body).toBe(202);
    return (res.json() as { alerts: { type: string }[] }).alerts.map((x) => x.type).sort();
  };
  /** A heavy model (a 2,000-instruction regex on a field the sender fills) and a light one. */
  const models = async (key: Key) => ({
    heavy: await create(key, {
      name: 'Digits after an a',
      match: { event: 'custom.probe', where: { field: 'metadata.x', op: 'regex', value: HEAVY_REGEX } },
      outcome: { alert: 'custom.heavy', severity: 'low' },
    }),
    light: await create(key, {
      name: 'Root',
      match: { event: 'custom.probe', where: { field: 'metadata.user', op: 'equals', value: 'root' } },
      outcome: { alert: 'custom.light', severity: 'low' },
    }),
  });
  const small = { x: 'a1', user: 'root' };
  const huge = () => ({ x: `a${'z'.repeat(15 * 1024)}`, user: 'root' });
  const settled = async () => {
    await a.services.threatModelCosts?.settled();
    await b.services.threatModelCosts?.settled();
  };

  it('suspends the heaviest model of an account that keeps sending events over budget, on every instance, until it is re-enabled', async () => {
    const acct = await a.account('pro');
    const other = await a.account('business');
    const mine = await models(acct);
    const theirs = await models(other);
    expect(mine.heavy.suspended).toBeNull();
    expect(await alertsOn(b, acct, small)).toEqual(['custom.heavy', 'custom.light']);

    // Events whose text makes the regex's worst case exceed the per-event budget: the regex is not
    // run (no alert), and every instance counts them until the model is suspended.
    let sent = 0;
    await until(
      async () => {
        const t = sent++ % 2 === 0 ? a : b;
        expect(await alertsOn(t, acct, huge())).toEqual([]);
        return (await modelOn(a, acct, mine.heavy.id)).suspended !== null;
      },
      'the heavy model suspended',
      20_000,
      0,
    );
    await settled();
    // Not one event: as many as the policy asks for (the first small event counts too).
    expect(sent + 1).toBeGreaterThanOrEqual(POLICY.minEvents);

    for (const t of [a, b]) {
      const view = await modelOn(t, acct, mine.heavy.id);
      expect(view).toMatchObject({ version: 1, enabled: true });
      expect(view.suspended?.reason).toMatch(/^Suspended at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: the account's threat models took [\d,]+ µs per event/);
      expect(view.suspended?.reason).toMatch(/over the budget of 50,000 µs/);
      expect(view.suspended?.reason).toMatch(/ran out of the per-event work budget/);
      expect(view.suspended?.reason).toMatch(/PATCH \{"enabled": true\}/);
      expect(Date.parse(view.suspended?.at ?? '')).not.toBeNaN();
      expect((await modelOn(t, acct, mine.light.id)).suspended).toBeNull();
      // The list shows it too.
      const listed = (await call(t, acct, 'GET', '/v1/threat-models')).json().data as ModelView[];
      expect(listed.find((m) => m.id === mine.heavy.id)?.suspended).toEqual(view.suspended);
      // It no longer fires on either instance; the account's light model still does.
      expect(await alertsOn(t, acct, small)).toEqual(['custom.light']);
      // Another account's copy of the same models is untouched.
      expect(await alertsOn(t, other, small)).toEqual(['custom.heavy', 'custom.light']);
      expect((await modelOn(t, other, theirs.heavy.id)).suspended).toBeNull();
    }
    const suspensions = (t: TestApp) =>
      t.vigil.app.inject({ method: 'GET', url: '/metrics' }).then((res) => Number(/^vigil_threat_model_suspensions_total (\d+)/m.exec(res.body)?.[1] ?? NaN));
    expect((await suspensions(a)) + (b === a ? 0 : await suspensions(b))).toBe(1);
    // One audit entry, by Vigil itself, whichever instance stored the suspension.
    const entries = (await call(a, acct, 'GET', `/v1/audit?target=${mine.heavy.id}&action=threat_model.suspended`)).json().data as {
      details: { reason: string };
    }[];
    expect(entries).toEqual([
      expect.objectContaining({
        actor: { kind: 'system', id: null, label: 'vigil' },
        details: { version: 1, reason: expect.stringMatching(/^Suspended at /) },
      }),
    ]);

    // Re-enabling it (a new version) clears the suspension: it runs again everywhere.
    const patched = await call(b, acct, 'PATCH', `/v1/threat-models/${mine.heavy.id}`, { enabled: true });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ version: 2, enabled: true, suspended: null });
    const enabled = (await call(a, acct, 'GET', `/v1/audit?target=${mine.heavy.id}&action=threat_model.enabled`)).json().data as object[];
    expect(enabled).toEqual([
      expect.objectContaining({ changes: { suspended: { before: entries[0]?.details.reason, after: null } }, details: { version: 2 } }),
    ]);
    for (const t of [a, b]) {
      expect((await modelOn(t, acct, mine.heavy.id)).suspended).toBeNull();
      expect(await alertsOn(t, acct, small)).toEqual(['custom.heavy', 'custom.light']);
    }
  });

  it('does not suspend a model for one huge event, nor for one batch of them, whatever ordinary traffic follows', async () => {
    const acct = await a.account('pro');
    const mine = await models(acct);
    expect(await alertsOn(a, acct, huge())).toEqual([]);
    const batch = await call(a, acct, 'POST', '/v1/events/batch', {
      events: Array.from({ length: 40 }, () => ({ event: 'custom.probe', actor_id: 'u2', metadata: huge() })),
    });
    expect(batch.statusCode, batch.body).toBe(202);
    for (let i = 0; i < 3 * POLICY.minEvents; i++) expect(await alertsOn(i % 2 === 0 ? a : b, acct, small)).toEqual(['custom.heavy', 'custom.light']);
    await settled();
    for (const t of [a, b]) expect((await modelOn(t, acct, mine.heavy.id)).suspended).toBeNull();
  });

  it('suspends a model whose evaluation throws, with what it threw, and answers the request with the other models', async () => {
    const acct = await a.account('pro');
    const mine = await models(acct);
    expect(await alertsOn(a, acct, small)).toEqual(['custom.heavy', 'custom.light']);
    // A fault injected into this instance's compiled copy: the heavy model's test throws.
    const compiled = (await a.services.threatModels?.inForce(acct.id)) ?? [];
    const heavy = compiled.find((m) => m.id === mine.heavy.id);
    expect(heavy).toBeDefined();
    (heavy?.steps[0] as { where: unknown }).where = () => {
      throw new Error('injected fault');
    };
    const res = await call(a, acct, 'POST', '/v1/events', { event: 'custom.probe', actor_id: 'u1', metadata: small });
    expect(res.statusCode, res.body).toBe(202);
    expect((res.json() as { alerts: { type: string }[] }).alerts.map((x) => x.type)).toEqual(['custom.light']);
    await settled();
    for (const t of [a, b]) {
      const view = await modelOn(t, acct, mine.heavy.id);
      expect(view.suspended?.reason).toMatch(/^Suspended at \S+: evaluating this model failed: injected fault \(on event /);
      expect((await modelOn(t, acct, mine.light.id)).suspended).toBeNull();
      expect(await alertsOn(t, acct, small)).toEqual(['custom.light']);
    }
  });
});
