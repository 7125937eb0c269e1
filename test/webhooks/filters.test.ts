import { describe, expect, it } from 'vitest';
import { filterMatches, globMatches } from '../../src/storage/webhooks/filters.js';

describe('endpoint filters', () => {
  const all = { minSeverity: 'low', alertTypes: [], killChainsOnly: false } as const;

  it('minimum severity', () => {
    expect(filterMatches({ ...all, minSeverity: 'high' }, { type: 'auth.mfa_disabled', severity: 'high' })).toBe(true);
    expect(filterMatches({ ...all, minSeverity: 'high' }, { type: 'auth.mfa_disabled', severity: 'critical' })).toBe(true);
    expect(filterMatches({ ...all, minSeverity: 'high' }, { type: 'data.bulk_export', severity: 'medium' })).toBe(false);
  });

  it('kill chains only', () => {
    expect(filterMatches({ ...all, killChainsOnly: true }, { type: 'chain.account_takeover', severity: 'critical' })).toBe(true);
    expect(filterMatches({ ...all, killChainsOnly: true }, { type: 'auth.mfa_disabled', severity: 'critical' })).toBe(false);
  });

  it('type globs: * spans any characters, everything else is literal', () => {
    expect(globMatches('auth.*', 'auth.mfa_disabled')).toBe(true);
    expect(globMatches('*.mfa_*', 'auth.mfa_disabled')).toBe(true);
    expect(globMatches('auth.*', 'authx.mfa')).toBe(false);
    expect(globMatches('auth.mfa_disabled', 'auth.mfa_disabledX')).toBe(false);
    expect(globMatches('a.b', 'aXb')).toBe(false);
    expect(filterMatches({ ...all, alertTypes: ['request.*', 'chain.*'] }, { type: 'chain.cover_tracks', severity: 'high' })).toBe(true);
    expect(filterMatches({ ...all, alertTypes: ['request.*'] }, { type: 'chain.cover_tracks', severity: 'high' })).toBe(false);
  });
});
