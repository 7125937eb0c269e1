import { describe, expect, it } from 'vitest';
import { compileSettings, DEFAULT_SETTINGS, validateDetectionSettings } from '../../src/detection/settings.js';

describe('detection settings validation', () => {
  it('accepts overrides and allowlists, and normalises them', () => {
    const result = validateDetectionSettings({
      detectors: { brute_force: { account_failures: 5, enabled: true }, impossible_travel: { enabled: false } },
      allowlists: {
        ips: [
          { value: '10.1.2.3/8', detectors: ['impossible_travel'], note: 'VPN' },
          { value: '2001:db8::1', detectors: ['*'] },
          { value: '::ffff:192.0.2.1', detectors: ['*'] },
        ],
        asns: [{ value: 13335, detectors: ['threat_intel'] }],
        actors: [{ value: 'svc-backup', detectors: ['bulk_export', 'bulk_export'] }],
        countries: [{ value: 'fr', detectors: ['geo_device_anomaly'] }],
      },
    });
    expect(result).toEqual({
      ok: true,
      value: {
        detectors: { brute_force: { account_failures: 5, enabled: true }, impossible_travel: { enabled: false } },
        allowlists: {
          ips: [
            { value: '10.0.0.0/8', detectors: ['impossible_travel'], note: 'VPN' },
            { value: '2001:db8::1/128', detectors: ['*'] },
            { value: '192.0.2.1/32', detectors: ['*'] },
          ],
          asns: [{ value: 13335, detectors: ['threat_intel'] }],
          actors: [{ value: 'svc-backup', detectors: ['bulk_export'] }],
          countries: [{ value: 'FR', detectors: ['geo_device_anomaly'] }],
        },
      },
    });
  });

  it('answers every problem with its path and an exact message', () => {
    const result = validateDetectionSettings({
      detectors: { brute_force: { account_failures: 0, window: 3, enabled: 'yes' }, nope: {}, api_abuse: 7 },
      allowlists: {
        ips: [{ value: '300.1.1.1', detectors: ['impossible_travel'] }, { value: '10.0.0.0/8', detectors: [] }, 'x'],
        asns: [{ value: -1, detectors: ['brute_force'] }],
        actors: [{ value: '', detectors: ['bogus'], extra: 1 }],
        countries: [{ value: 'FRA', detectors: ['*'], note: 5 }],
        hosts: [],
      },
    });
    expect(result).toEqual({
      ok: false,
      errors: [
        'detectors.brute_force.account_failures must be an integer from 2 to 100000',
        'detectors.brute_force.window: unknown setting (known: enabled, account_failures, ip_failures, window_minutes, success_after_failures, success_window_minutes)',
        'detectors.brute_force.enabled must be a boolean',
        expect.stringMatching(/^detectors\.nope: unknown detector \(known: brute_force, credential_spray, .*kill_chain\)$/),
        'detectors.api_abuse must be an object',
        'allowlists.ips[0].value must be an IP address or CIDR (e.g. 203.0.113.7 or 10.0.0.0/8)',
        'allowlists.ips[1].detectors must be a non-empty array of detector names or "*"',
        'allowlists.ips[2] must be an object with value and detectors',
        'allowlists.asns[0].value must be an integer from 0 to 4294967295',
        'allowlists.actors[0].extra: unknown field (known: value, detectors, note)',
        'allowlists.actors[0].value must be a non-empty string of at most 256 characters',
        'allowlists.actors[0].detectors: unknown detector "bogus"',
        'allowlists.countries[0].value must be a two-letter ISO 3166-1 country code',
        'allowlists.countries[0].note must be a string of at most 200 characters',
        'allowlists.hosts: unknown list (known: ips, asns, actors, countries)',
      ],
    });
  });

  it('rejects parts of the wrong shape', () => {
    expect(validateDetectionSettings({ detectors: [], allowlists: 'x' })).toEqual({
      ok: false,
      errors: ['detectors must be an object', 'allowlists must be an object'],
    });
    expect(validateDetectionSettings({ allowlists: { ips: new Array(1001).fill({ value: '10.0.0.1', detectors: ['*'] }) } })).toEqual({
      ok: false,
      errors: ['allowlists.ips must be an array of at most 1000 entries'],
    });
    expect(validateDetectionSettings({})).toEqual({ ok: true, value: {} });
  });
});

describe('compiled settings', () => {
  it('uses the documented defaults when nothing is set', () => {
    expect(compileSettings({})).toBe(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS.thresholds('brute_force')).toEqual({
      account_failures: 10,
      ip_failures: 20,
      window_minutes: 5,
      success_after_failures: 5,
      success_window_minutes: 30,
    });
  });

  it('applies overrides and matches allowlists by CIDR, ASN, actor and country', () => {
    const settings = {
      detectors: { brute_force: { ip_failures: 50 }, api_abuse: { enabled: false } },
      allowlists: {
        ips: [
          { value: '10.0.0.0/8', detectors: ['impossible_travel'] },
          { value: '2001:db8::/32', detectors: ['brute_force'] },
        ],
        asns: [{ value: 64500, detectors: ['threat_intel'] }],
        actors: [{ value: 'svc', detectors: ['bulk_export'] }],
        countries: [{ value: 'FR', detectors: ['geo_device_anomaly'] }],
      },
    };
    const c = compileSettings(settings);
    expect(compileSettings(settings)).toBe(c);
    expect(c.thresholds('brute_force')).toEqual({
      account_failures: 10,
      ip_failures: 50,
      window_minutes: 5,
      success_after_failures: 5,
      success_window_minutes: 30,
    });
    expect(c.enabled('api_abuse')).toBe(false);
    expect(c.enabled('brute_force')).toBe(true);
    expect([...(c.silenced({ ip: '10.20.30.40' }) ?? [])]).toEqual(['impossible_travel']);
    expect([...(c.silenced({ ip: '::ffff:10.0.0.1' }) ?? [])]).toEqual(['impossible_travel']);
    expect([...(c.silenced({ ip: '2001:db8:1::5' }) ?? [])]).toEqual(['brute_force']);
    expect(c.silenced({ ip: '11.0.0.1' })).toBeNull();
    expect(c.silenced({ ip: 'not-an-ip' })).toBeNull();
    expect([...(c.silenced({ ip: '10.0.0.1', asn: 64500, actorId: 'svc', country: 'FR' }) ?? [])].sort()).toEqual([
      'bulk_export',
      'geo_device_anomaly',
      'impossible_travel',
      'threat_intel',
    ]);
  });
});
