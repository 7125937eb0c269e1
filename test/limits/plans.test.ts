import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, ENTRY_PLAN, parsePlans, PlanFileError, planOf } from '../../src/limits/plans.js';

const plans = (spec: Record<string, unknown>) => parsePlans(JSON.stringify({ plans: spec }));
const TEAM = { rpm: 5_000, eps: 200, batch_max: 100, monthly_cap: 1_000_000 };

describe('parsePlans', () => {
  it('keeps the interface defaults (8.1) and overrides by name', () => {
    const table = plans({ free: { rpm: 60 }, team: TEAM });
    expect(table.free).toMatchObject({ rpm: 60, eps: 5, batchMax: 0, monthlyCap: 2_500, overage: 'drop' });
    expect(table.starter).toEqual(DEFAULT_PLANS.starter);
    expect(table.team).toMatchObject({ rpm: 5_000, eps: 200, batchMax: 100, overage: 'bill', overageUsdPer1000: null });
  });

  it('refuses a batch size above the RPM: such a batch could never be accepted', () => {
    expect(() => plans({ starter: { rpm: 40 } })).toThrow(PlanFileError);
    expect(() => plans({ starter: { rpm: 40 } })).toThrow('batch_max (50) must not exceed rpm (40)');
    expect(plans({ starter: { rpm: 50 } }).starter?.rpm).toBe(50);
  });

  it('names the first limit a new plan lacks', () => {
    expect(() => plans({ team: {} })).toThrow('new plan "team" needs rpm');
    expect(() => plans({ team: { rpm: 10, eps: 1 } })).toThrow('new plan "team" needs batch_max');
    expect(() => plans({ team: { rpm: 10, eps: 1, batch_max: 5 } })).toThrow('new plan "team" needs monthly_cap');
  });

  it('refuses rpm or eps below 1', () => {
    expect(() => plans({ free: { eps: 0 } })).toThrow('plans.free.eps must be an integer of at least 1, got 0');
    expect(() => plans({ free: { rpm: 0 } })).toThrow('plans.free.rpm must be an integer of at least 1, got 0');
  });
});

describe('plan capabilities', () => {
  it('the built-in plans: threat models on Pro and Business, retention 7, 30, 90 and 365 days', () => {
    const table = parsePlans('{"plans": {}}');
    expect(Object.fromEntries(Object.values(table).map((p) => [p.name, p.capabilities]))).toEqual({
      free: { threatModels: false, retentionDays: 7 },
      starter: { threatModels: false, retentionDays: 30 },
      pro: { threatModels: true, retentionDays: 90 },
      business: { threatModels: true, retentionDays: 365 },
    });
  });

  it('a new plan that states no capability gets the least: no threat models, the shortest retention', () => {
    expect(plans({ team: TEAM }).team?.capabilities).toEqual({ threatModels: false, retentionDays: 7 });
    // Even one priced and limited as a paid plan: what it includes is what the file says.
    expect(plans({ tinyfree: { rpm: 30, eps: 5, batch_max: 0, monthly_cap: 2_500, overage: 'drop' } }).tinyfree?.capabilities.threatModels).toBe(false);
  });

  it('the plans file sets each capability of a new plan and of a built-in one', () => {
    const table = plans({ team: Object.assign({ threat_models: true, retention_days: 60 }, TEAM), pro: { threat_models: false }, free: { retention_days: 3 } });
    expect(table.team?.capabilities).toEqual({ threatModels: true, retentionDays: 60 });
    // A field the entry does not state keeps the built-in plan's value.
    expect(table.pro?.capabilities).toEqual({ threatModels: false, retentionDays: 90 });
    expect(table.pro?.rpm).toBe(1_000);
    expect(table.free?.capabilities).toEqual({ threatModels: false, retentionDays: 3 });
  });

  it('an account whose plan the table no longer has is on the entry plan', () => {
    const table = plans({ team: TEAM });
    expect(planOf(table, 'team').name).toBe('team');
    expect(planOf(table, 'retired')).toBe(table[ENTRY_PLAN]);
    expect(planOf(table, 'constructor')).toBe(table[ENTRY_PLAN]);
  });
});

describe('plans file errors name the plan and the field', () => {
  it.each([
    [{ team: Object.assign({ threat_models: 'yes' }, TEAM) }, 'plans.team.threat_models must be true or false, got "yes"'],
    [{ team: Object.assign({ threat_models: 1 }, TEAM) }, 'plans.team.threat_models must be true or false, got 1'],
    [{ pro: { retention_days: 0 } }, 'plans.pro.retention_days must be an integer from 1 to 36500, got 0'],
    [{ pro: { retention_days: 1.5 } }, 'plans.pro.retention_days must be an integer from 1 to 36500, got 1.5'],
    [{ pro: { retention_days: 40_000 } }, 'plans.pro.retention_days must be an integer from 1 to 36500, got 40000'],
    [{ pro: { retention_days: '30' } }, 'plans.pro.retention_days must be an integer from 1 to 36500, got "30"'],
    [{ pro: { rpm: -5 } }, 'plans.pro.rpm must be an integer of at least 1, got -5'],
    [{ pro: { batch_max: 2.5 } }, 'plans.pro.batch_max must be an integer of at least 0, got 2.5'],
    [{ pro: { monthly_cap: null } }, 'plans.pro.monthly_cap must be an integer of at least 0, got null'],
    [{ pro: { price_usd_month: -1 } }, 'plans.pro.price_usd_month must be a number of at least 0, got -1'],
    [{ pro: { overage: 'refuse' } }, 'plans.pro.overage must be one of: drop, bill, got "refuse"'],
    [{ pro: { overage_usd_per_1000: 'free' } }, 'plans.pro.overage_usd_per_1000 must be a number of at least 0, or null, got "free"'],
    [
      { pro: { threat_model: true } },
      'plans.pro.threat_model is not allowed here (allowed: rpm, eps, batch_max, monthly_cap, overage, price_usd_month, overage_usd_per_1000, threat_models, retention_days)',
    ],
    [{ pro: [] }, 'plan "pro" must be an object'],
    [{ pro: 'big' }, 'plan "pro" must be an object'],
    [{ Pro: {} }, 'plan name "Pro" must be lowercase letters, digits, - or _'],
  ])('%j', (spec, message) => {
    expect(() => plans(spec)).toThrow(PlanFileError);
    expect(() => plans(spec)).toThrow(message);
  });

  it('a plan named after what every object inherits', () => {
    expect(() => parsePlans('{"plans": {"__proto__": {}}}')).toThrow('plan name "__proto__" must be lowercase letters, digits, - or _');
  });

  it('a file without a plans object', () => {
    for (const doc of ['[]', '{}', '{"plans": []}', '{"plans": 1}', 'null'])
      expect(() => parsePlans(doc)).toThrow('must be an object {"plans": {"<name>": {...}}}');
    expect(() => parsePlans('{"plans": ')).toThrow('is not valid JSON');
  });

  it('an explicit null price per 1,000 events replaces the plan’s own', () => {
    expect(plans({ starter: { overage_usd_per_1000: null } }).starter?.overageUsdPer1000).toBeNull();
  });
});
