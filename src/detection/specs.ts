/**
 * The detection catalogue as the catalog, the settings and the webhooks read it: derived from the
 * detector modules (detectors/index.ts), which hold every declaration, so what is documented is
 * what runs.
 */
import type { AlertDecision, AlertTypeSpec, DetectorSpec, KillChainSpec, Severity, ThresholdSpec } from '../event/classification.js';
import { SEVERITY_WEIGHTS } from '../scoring/weights.js';
import { DETECTOR_MODULES, type DetectorModule } from './detectors/index.js';
import { killChain } from './kill-chains.js';

/** Detectors whose signal the composite score counts on a line of its own: their alerts add no points. */
export const UNSCORED_DETECTORS: ReadonlySet<string> = new Set(DETECTOR_MODULES.filter((d) => d.scored === false).map((d) => d.name));

function thresholdsOf(d: DetectorModule): ThresholdSpec[] | undefined {
  if (d.thresholds === undefined) return undefined;
  return Object.entries(d.thresholds).map(([name, t]) => ({ name, default: t.default, min: t.min, max: t.max, description: t.description }));
}

function detectorSpec(d: DetectorModule): DetectorSpec {
  const thresholds = thresholdsOf(d);
  return Object.assign(
    { name: d.name, families: d.families },
    d.generic === true ? { generic: true } : {},
    { description: d.description, alertTypes: Object.keys(d.alerts) },
    thresholds === undefined ? {} : { thresholds },
  );
}

/**
 * What an alert means for decisions: a high alert on its own reaches `challenge`, a critical one
 * `block`, unless its module declares another decision; a high or critical alert of a scored
 * detector also keeps the actor's and the session's later events at `challenge` while it is open.
 */
const DECISION_BY_SEVERITY: Readonly<Partial<Record<Severity, AlertDecision>>> = { high: 'challenge', critical: 'block' };

function alertSpecs(d: DetectorModule): AlertTypeSpec[] {
  return Object.entries(d.alerts).map(([type, a]) => {
    const decision = a.decision === undefined ? DECISION_BY_SEVERITY[a.severity] : (a.decision ?? undefined);
    const carries = DECISION_BY_SEVERITY[a.severity] !== undefined && d.scored !== false;
    const spec: AlertTypeSpec = {
      type,
      detector: d.name,
      severity: a.severity,
      points: SEVERITY_WEIGHTS[a.severity],
      mitre: a.mitre,
      description: a.description,
      windowMs: a.windowMs,
    };
    return Object.assign(spec, decision === undefined ? {} : { decision }, carries ? { carries } : {});
  });
}

export const DETECTOR_SPECS: readonly DetectorSpec[] = DETECTOR_MODULES.map(detectorSpec);

export const ALERT_TYPES: readonly AlertTypeSpec[] = DETECTOR_MODULES.flatMap(alertSpecs);

export const KILL_CHAINS: readonly KillChainSpec[] = killChain.chains.map((c) => ({
  type: c.type,
  subject: c.subject,
  windowMs: c.windowMs,
  stages: c.stages.map((s) => ({ name: s.name, description: s.description })),
}));

const ALERT_BY_TYPE = new Map<string, AlertTypeSpec>();
for (const spec of ALERT_TYPES) {
  const other = ALERT_BY_TYPE.get(spec.type);
  if (other !== undefined) throw new Error(`alert type ${spec.type} is declared by ${other.detector} and ${spec.detector}`);
  ALERT_BY_TYPE.set(spec.type, spec);
}

/** The spec of a known alert type; throws on a typo so a detector cannot raise an undocumented type. */
export function alertSpec(type: string): AlertTypeSpec {
  const spec = ALERT_BY_TYPE.get(type);
  if (spec === undefined) throw new Error(`unknown alert type ${type}`);
  return spec;
}
