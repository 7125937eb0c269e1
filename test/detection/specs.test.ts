import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/catalog.js';
import { DETECTOR_FAMILIES } from '../../src/event/classification.js';
import { defineDetector } from '../../src/detection/detector.js';
import { DETECTORS, DETECTOR_MODULES } from '../../src/detection/detectors/index.js';
import { killChain } from '../../src/detection/kill-chains.js';
import { ALERT_TYPES, DETECTOR_SPECS, KILL_CHAINS, UNSCORED_DETECTORS, alertSpec } from '../../src/detection/specs.js';
import { compileSettings, validateDetectionSettings } from '../../src/detection/settings.js';
import { SEVERITY_WEIGHTS } from '../../src/scoring/weights.js';
import { FIXTURES_ROOT } from './fixtures.js';

const declaredAlerts = DETECTOR_MODULES.flatMap((d) => Object.keys(d.alerts));

describe('detection catalogue', () => {
  it('is derived from the detector modules: one spec per module, one alert type per declared alert, one kill chain per chain', () => {
    expect(DETECTOR_SPECS.map((d) => d.name)).toEqual(DETECTOR_MODULES.map((d) => d.name));
    expect(new Set(DETECTOR_SPECS.map((d) => d.name)).size).toBe(DETECTOR_MODULES.length);
    expect(ALERT_TYPES.map((a) => a.type)).toEqual(declaredAlerts);
    expect(new Set(declaredAlerts).size).toBe(declaredAlerts.length);
    expect(KILL_CHAINS.map((c) => c.type)).toEqual(killChain.chains.map((c) => c.type));
    expect(ALERT_TYPES.filter((a) => a.detector === killChain.name).map((a) => a.type)).toEqual(KILL_CHAINS.map((c) => c.type));
  });

  it('serves the counts of the modules at GET /v1/catalog', () => {
    const doc = buildCatalog({ detectors: DETECTOR_SPECS, alertTypes: ALERT_TYPES, killChains: KILL_CHAINS }).describe() as { counts: Record<string, number> };
    expect(doc.counts).toMatchObject({ detectors: DETECTOR_MODULES.length, alert_types: declaredAlerts.length, kill_chains: killChain.chains.length });
  });

  it('runs every module but kill_chain as a detector of single events', () => {
    expect([...DETECTORS.keys()]).toEqual(DETECTOR_MODULES.filter((d) => d !== killChain).map((d) => d.name));
  });

  it('has a folder of scenario fixtures for every detector, and none for an unknown one', () => {
    const folders = readdirSync(FIXTURES_ROOT, { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(folders.map((e) => e.name).sort()).toEqual(DETECTOR_MODULES.map((d) => d.name).sort());
  });

  it('describes each alert type fully: severity points, MITRE ids, a paragraph, a window', () => {
    for (const a of ALERT_TYPES) {
      expect(a.points, a.type).toBe(SEVERITY_WEIGHTS[a.severity]);
      expect(a.mitre.length, a.type).toBeGreaterThan(0);
      for (const id of a.mitre) expect(id, a.type).toMatch(/^T\d{4}(\.\d{3})?$/);
      expect(a.description.length, a.type).toBeGreaterThan(40);
      expect(a.windowMs, a.type).toBeGreaterThan(0);
      expect(alertSpec(a.type)).toBe(a);
    }
    expect(() => alertSpec('auth.no_such_alert')).toThrow(/unknown alert type/);
  });

  it('uses only the 10 families; threat_intel and request_scanner are generic and left to their own score lines', () => {
    for (const d of DETECTOR_SPECS) for (const f of d.families) expect(DETECTOR_FAMILIES).toContain(f);
    expect(
      DETECTOR_SPECS.filter((d) => d.generic)
        .map((d) => d.name)
        .sort(),
    ).toEqual(['request_scanner', 'threat_intel']);
    expect([...UNSCORED_DETECTORS].sort()).toEqual(['request_scanner', 'threat_intel']);
  });

  it('types the thresholds a detector reads by the names it declares (a misspelt name does not compile)', () => {
    const probe = defineDetector({
      name: 'probe',
      families: ['api'],
      description: 'A detector that only reads its thresholds.',
      thresholds: { window_minutes: { default: 5, min: 1, max: 60, description: 'Sliding window length in minutes.' } },
      alerts: {},
      detect(_ctx, t) {
        // @ts-expect-error: windows_minutes is not declared
        return t.windows_minutes === t.window_minutes ? undefined : undefined;
      },
    });
    expect(Object.keys(probe.thresholds ?? {})).toEqual(['window_minutes']);
  });

  it('documents thresholds with integer defaults inside their bounds', () => {
    for (const d of DETECTOR_SPECS)
      for (const t of d.thresholds ?? []) {
        expect(t.default >= t.min && t.default <= t.max, `${d.name}.${t.name}`).toBe(true);
        expect(Number.isInteger(t.default), `${d.name}.${t.name}`).toBe(true);
        expect(t.description.length, `${d.name}.${t.name}`).toBeGreaterThan(10);
      }
  });

  it('validates and compiles an account setting of every declared threshold, at its bounds', () => {
    for (const d of DETECTOR_SPECS)
      for (const t of d.thresholds ?? []) {
        const ok = validateDetectionSettings({ detectors: { [d.name]: { [t.name]: t.max } } });
        expect(ok.ok, `${d.name}.${t.name}`).toBe(true);
        expect(validateDetectionSettings({ detectors: { [d.name]: { [t.name]: t.max + 1 } } })).toEqual({
          ok: false,
          errors: [`detectors.${d.name}.${t.name} must be an integer from ${t.min} to ${t.max}`],
        });
        expect(compileSettings({ detectors: { [d.name]: { [t.name]: t.min } } }).thresholds(d.name)[t.name], `${d.name}.${t.name}`).toBe(t.min);
      }
  });
});

describe('alert decisions', () => {
  it('high alerts challenge and critical ones block, except request-scanner findings; behavioural ones stand over the actor', () => {
    for (const a of ALERT_TYPES) {
      const expected = a.detector === 'request_scanner' ? undefined : a.severity === 'critical' ? 'block' : a.severity === 'high' ? 'challenge' : undefined;
      if (a.type !== 'api.enumeration' && a.type !== 'network.tor_exit_node') expect(a.decision, a.type).toBe(expected);
      expect(a.carries === true, a.type).toBe(expected !== undefined && a.detector !== 'threat_intel');
    }
    expect(ALERT_TYPES.filter((a) => a.severity === 'medium' && a.decision !== undefined).map((a) => a.type)).toEqual([
      'network.tor_exit_node',
      'api.enumeration',
    ]);
  });
});
