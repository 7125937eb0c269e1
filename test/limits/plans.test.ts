import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, parsePlans, PlanFileError } from '../../src/limits/plans.js';

describe('parsePlans', () => {
  it('keeps the interface defaults (8.1) and overrides by name', () => {
    const table = parsePlans(JSON.stringify({ plans: { free: { rpm: 60 }, team: { rpm: 5_000, eps: 200, batch_max: 100, monthly_cap: 1_000_000 } } }));
    expect(table.free).toMatchObject({ rpm: 60, eps: 5, batchMax: 0, monthlyCap: 2_500, overage: 'drop' });
    expect(table.starter).toEqual(DEFAULT_PLANS.starter);
    expect(table.team).toMatchObject({ rpm: 5_000, eps: 200, batchMax: 100, overage: 'bill', overageUsdPer1000: null });
  });

  it('refuses a batch size above the RPM: such a batch could never be accepted', () => {
    expect(() => parsePlans(JSON.stringify({ plans: { starter: { rpm: 40 } } }))).toThrow(PlanFileError);
    expect(() => parsePlans(JSON.stringify({ plans: { starter: { rpm: 40 } } }))).toThrow('batch_max (50) must not exceed rpm (40)');
    expect(parsePlans(JSON.stringify({ plans: { starter: { rpm: 50 } } })).starter?.rpm).toBe(50);
  });

  it('names the first limit a new plan lacks', () => {
    expect(() => parsePlans(JSON.stringify({ plans: { team: { rpm: 10, eps: 1 } } }))).toThrow('new plan "team" needs batch_max');
    expect(() => parsePlans(JSON.stringify({ plans: { team: { rpm: 10, eps: 1, batch_max: 5 } } }))).toThrow('new plan "team" needs monthly_cap');
  });

  it('refuses rpm or eps below 1', () => {
    expect(() => parsePlans(JSON.stringify({ plans: { free: { eps: 0 } } }))).toThrow('rpm and eps must be at least 1');
  });
});
