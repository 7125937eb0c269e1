import { describe, expect, it } from 'vitest';
import { DETECTOR_FAMILIES } from '../../src/event/classification.js';
import { DETECTORS, KILL_CHAIN_DETECTOR } from '../../src/detection/detectors/index.js';
import { ALERT_TYPES, DETECTOR_SPECS, KILL_CHAINS } from '../../src/detection/specs.js';
import { SEVERITY_WEIGHTS } from '../../src/scoring/weights.js';

describe('detection catalogue', () => {
  it('has 21 detectors, 48 alert types (43 single-stage + 5 chains) and 5 kill chains', () => {
    expect(DETECTOR_SPECS).toHaveLength(21);
    expect(ALERT_TYPES).toHaveLength(48);
    expect(ALERT_TYPES.filter((a) => a.type.startsWith('chain.'))).toHaveLength(5);
    expect(KILL_CHAINS).toHaveLength(5);
    expect(new Set(DETECTOR_SPECS.map((d) => d.name)).size).toBe(21);
    expect(new Set(ALERT_TYPES.map((a) => a.type)).size).toBe(48);
  });

  it('gives every alert type a detector that declares it, and every declared type a spec', () => {
    const declared = new Map(DETECTOR_SPECS.flatMap((d) => d.alertTypes.map((t) => [t, d.name] as const)));
    expect(declared.size).toBe(48);
    for (const a of ALERT_TYPES) expect(declared.get(a.type), a.type).toBe(a.detector);
  });

  it('implements every detector it documents', () => {
    for (const d of DETECTOR_SPECS) expect(d.name === KILL_CHAIN_DETECTOR || DETECTORS.has(d.name), d.name).toBe(true);
    expect(DETECTORS.size).toBe(20);
  });

  it('describes each alert type fully: severity points, MITRE ids, a paragraph, a window', () => {
    for (const a of ALERT_TYPES) {
      expect(a.points, a.type).toBe(SEVERITY_WEIGHTS[a.severity]);
      expect(a.mitre.length, a.type).toBeGreaterThan(0);
      for (const id of a.mitre) expect(id, a.type).toMatch(/^T\d{4}(\.\d{3})?$/);
      expect(a.description.length, a.type).toBeGreaterThan(40);
      expect(a.windowMs, a.type).toBeGreaterThan(0);
    }
  });

  it('uses only the 10 families; threat_intel and request_scanner are generic', () => {
    for (const d of DETECTOR_SPECS) for (const f of d.families) expect(DETECTOR_FAMILIES).toContain(f);
    expect(
      DETECTOR_SPECS.filter((d) => d.generic)
        .map((d) => d.name)
        .sort(),
    ).toEqual(['request_scanner', 'threat_intel']);
  });

  it('documents thresholds with defaults inside their bounds', () => {
    for (const d of DETECTOR_SPECS) for (const t of d.thresholds ?? []) expect(t.default >= t.min && t.default <= t.max, `${d.name}.${t.name}`).toBe(true);
  });

  it('names each kill chain after an alert type of kill_chain', () => {
    const chainAlerts = DETECTOR_SPECS.find((d) => d.name === 'kill_chain')?.alertTypes;
    expect(KILL_CHAINS.map((c) => c.type).sort()).toEqual([...(chainAlerts ?? [])].sort());
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
