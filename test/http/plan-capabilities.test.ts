/**
 * What a plan includes follows the plans file, whatever the plan is called: a Free-priced plan of
 * another name has no threat models, and a plan that states `threat_models: true` has them, at
 * the API, at ingestion and in the dashboard's session.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, testApp, type TestApp } from '../helpers/app.js';
import { expectError } from './support.js';

const ROOMY = { rpm: 100_000, eps: 100_000 };

function plansFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'vigil-plans-')), 'plans.json');
  writeFileSync(
    file,
    JSON.stringify({
      plans: {
        // Priced and limited as Free, under another name, stating no capability.
        tinyfree: { rpm: 30, eps: 5, batch_max: 0, monthly_cap: 2_500, overage: 'drop' },
        team: Object.assign({ batch_max: 100, monthly_cap: 1_000_000, threat_models: true }, ROOMY),
        free: ROOMY,
        pro: ROOMY,
      },
    }),
  );
  return file;
}

describe('plan capabilities over HTTP', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await testApp({
      VIGIL_DASHBOARD_KEY_SIGN_IN: 'on',
      VIGIL_PLANS_FILE: plansFile(),
      VIGIL_IP_LIMITS: '127.0.0.0/8=100000000',
      VIGIL_THREAT_MODEL_CHANGES_PER_MINUTE: '1000000',
    });
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, key: string, payload?: unknown) =>
    t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload: payload as object }) });
  const MODEL = { name: 'Any probe', match: { event: 'custom.probe' }, outcome: { alert: 'custom.probe_seen', severity: 'low' } };
  const alertsOf = async (key: string): Promise<string[]> => {
    const res = await call('POST', '/v1/events', key, { event: 'custom.probe' });
    expect(res.statusCode, res.body).toBe(202);
    return (res.json() as { alerts: { type: string }[] }).alerts.map((a) => a.type);
  };
  const signIn = async (key: string) => {
    const res = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/session', payload: { key } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { account: { plan: string; pro: boolean } };
  };
  const setPlan = async (id: string, plan: string) => {
    const res = await t.vigil.app.inject({ method: 'PATCH', url: `/admin/accounts/${id}`, headers: bearer(ADMIN_TOKEN), payload: { plan } });
    expect(res.statusCode, res.body).toBe(200);
  };

  it('a Free-priced plan of another name is refused threat models as Free is: 403 PLAN_UPGRADE_REQUIRED', async () => {
    for (const plan of ['free', 'tinyfree']) {
      const acct = await t.account(plan);
      expectError(await call('GET', '/v1/threat-models', acct.secret), 403, 'PLAN_UPGRADE_REQUIRED');
      const created = expectError(await call('POST', '/v1/threat-models', acct.secret, MODEL), 403, 'PLAN_UPGRADE_REQUIRED');
      expect(created.message).toBe(`Custom threat models are available on the Pro and Business plans; this account is on ${plan}.`);
      expectError(await call('POST', '/v1/threat-models/test', acct.secret, { id: 'tm_x' }), 403, 'PLAN_UPGRADE_REQUIRED');
    }
  });

  it('a plan stating threat_models: true creates models and has them evaluated; moving to a plan without them stops both', async () => {
    const acct = await t.account('team');
    const created = await call('POST', '/v1/threat-models', acct.secret, MODEL);
    expect(created.statusCode, created.body).toBe(201);
    expect(await alertsOf(acct.secret)).toEqual(['custom.probe_seen']);
    await setPlan(acct.id, 'tinyfree');
    expect(await alertsOf(acct.secret)).toEqual([]);
    expectError(await call('GET', '/v1/threat-models', acct.secret), 403, 'PLAN_UPGRADE_REQUIRED');
    await setPlan(acct.id, 'team');
    expect(await alertsOf(acct.secret)).toEqual(['custom.probe_seen']);
  });

  it("the dashboard session's pro flag follows the plan's threat models, not its name", async () => {
    const expected: Record<string, boolean> = { free: false, tinyfree: false, team: true, pro: true };
    for (const [plan, pro] of Object.entries(expected)) {
      const acct = await t.account(plan);
      expect((await signIn(acct.secret)).account).toMatchObject({ plan, pro });
    }
  });
});
