import type { ValidatedEvent } from '../event/types.js';
import { AGENT_ADDITIONAL_TYPES, AGENT_TYPES, BASE_SCORES, STANDARD_TYPES, type EventTypeSpec } from './event-types.js';
import { FAMILY_DESCRIPTIONS } from './families.js';
import { INFERRED_RULES, inferTypes } from './inferred-rules.js';
import { DETECTOR_FAMILIES, INFERRED_TYPES, type CatalogInput, type Classification, type DetectorFamily, type InferredType } from '../event/classification.js';

/** The catalog built once at start-up. */
export interface Catalog {
  classify(event: ValidatedEvent): Classification;
  /** The document served by GET /v1/catalog. */
  describe(): Record<string, unknown>;
}

export const CUSTOM_PREFIX = 'custom.';

const FAMILY_BIT: Readonly<Record<DetectorFamily, number>> = Object.fromEntries(DETECTOR_FAMILIES.map((f, i) => [f, 1 << i])) as Record<DetectorFamily, number>;
const maskOf = (families: readonly DetectorFamily[]): number => families.reduce((mask, f) => mask | FAMILY_BIT[f], 0);
const familiesOf = (mask: number): DetectorFamily[] => DETECTOR_FAMILIES.filter((f) => (mask & FAMILY_BIT[f]) !== 0);

interface TypeEntry {
  readonly spec: EventTypeSpec;
  readonly baseScore: number;
  readonly mask: number;
}

export class CatalogError extends Error {}

function checkInput(input: CatalogInput): void {
  const names = new Set<string>();
  for (const d of input.detectors) {
    if (names.has(d.name)) throw new CatalogError(`detector "${d.name}" is declared twice`);
    names.add(d.name);
    for (const f of d.families) if (!(f in FAMILY_BIT)) throw new CatalogError(`detector "${d.name}" declares unknown family "${f}"`);
  }
  for (const a of input.alertTypes) if (!names.has(a.detector)) throw new CatalogError(`alert type "${a.type}" names unknown detector "${a.detector}"`);
}

function buildTypeIndex(): Map<string, TypeEntry> {
  const index = new Map<string, TypeEntry>();
  for (const spec of [...STANDARD_TYPES, ...AGENT_TYPES, ...AGENT_ADDITIONAL_TYPES]) {
    if (index.has(spec.type)) throw new CatalogError(`event type "${spec.type}" is listed twice`);
    index.set(spec.type, { spec, baseScore: BASE_SCORES[spec.type] ?? 0, mask: maskOf(spec.families) });
  }
  for (const type of Object.keys(BASE_SCORES)) if (!index.has(type)) throw new CatalogError(`scored type "${type}" is not in the catalog`);
  return index;
}

export function buildCatalog(input: CatalogInput): Catalog {
  checkInput(input);
  const types = buildTypeIndex();
  const inferredMask = new Map<InferredType, number>(INFERRED_RULES.map((r) => [r.type, maskOf(r.families)]));
  const generic = input.detectors.filter((d) => d.generic).map((d) => d.name);
  const specific = input.detectors.filter((d) => !d.generic).map((d) => ({ name: d.name, mask: maskOf(d.families) }));

  // One entry per family combination (10 families: 1024 masks), filled on first use, so that
  // classify never allocates a family set or a detector list.
  const familySets: (ReadonlySet<DetectorFamily> | undefined)[] = new Array(1 << DETECTOR_FAMILIES.length);
  const detectorLists: (readonly string[] | undefined)[] = new Array(1 << DETECTOR_FAMILIES.length);
  const familySet = (mask: number) => (familySets[mask] ??= Object.freeze(new Set(familiesOf(mask))));
  const detectorList = (mask: number) =>
    (detectorLists[mask] ??= Object.freeze([...generic, ...specific.filter((d) => (d.mask & mask) !== 0).map((d) => d.name)]));

  const customClassification: Classification = Object.freeze({
    predefined: false,
    baseScore: 0,
    inferred: Object.freeze([]),
    families: familySet(0),
    detectors: detectorList(0),
  });
  const document = describeCatalog(input, types, familySet, detectorList);

  return {
    classify(event) {
      if (event.type.startsWith(CUSTOM_PREFIX)) return customClassification;
      const entry = types.get(event.type);
      const inferred = inferTypes(event);
      let mask = entry ? entry.mask : 0;
      for (const t of inferred) mask |= inferredMask.get(t) as number;
      return { predefined: entry !== undefined, baseScore: entry ? entry.baseScore : 0, inferred, families: familySet(mask), detectors: detectorList(mask) };
    },
    describe: () => document,
  };
}

function describeCatalog(
  input: CatalogInput,
  types: ReadonlyMap<string, TypeEntry>,
  familySet: (mask: number) => ReadonlySet<DetectorFamily>,
  detectorList: (mask: number) => readonly string[],
): Record<string, unknown> {
  const eventType = (entry: TypeEntry) => ({
    type: entry.spec.type,
    kind: entry.spec.kind,
    base_score: entry.baseScore,
    families: [...familySet(entry.mask)],
    detectors: detectorList(entry.mask),
  });
  const entries = [...types.values()];
  return Object.freeze({
    type_pattern: '^[a-z][a-z0-9]{0,29}(\\.[a-z][a-z0-9_]{0,29}){1,3}$',
    counts: {
      standard_types: entries.filter((e) => e.spec.kind === 'standard').length,
      agent_types: entries.filter((e) => e.spec.kind === 'agent').length,
      additional_agent_types: entries.filter((e) => e.spec.kind === 'agent_additional').length,
      inferred_types: INFERRED_TYPES.length,
      families: DETECTOR_FAMILIES.length,
      detectors: input.detectors.length,
      alert_types: input.alertTypes.length,
      kill_chains: input.killChains.length,
    },
    event_types: entries.map(eventType),
    custom: {
      prefix: CUSTOM_PREFIX,
      base_score: 0,
      description: 'Accepted with full enrichment, threat intel, request scanning and scoring; no type-specific base score or detectors.',
      detectors: detectorList(0),
    },
    inferred_types: INFERRED_RULES.map((rule) => ({
      type: rule.type,
      tag: `inferred:${rule.type}`,
      trigger: rule.trigger,
      activates: rule.activates,
      families: rule.families,
    })),
    families: DETECTOR_FAMILIES.map((name) => ({
      name,
      description: FAMILY_DESCRIPTIONS[name],
      detectors: input.detectors.filter((d) => !d.generic && d.families.includes(name)).map((d) => d.name),
    })),
    detectors: input.detectors.map((d) => ({
      name: d.name,
      description: d.description,
      families: d.families,
      generic: d.generic === true,
      alert_types: d.alertTypes,
    })),
    alert_types: input.alertTypes.map((a) => ({
      type: a.type,
      detector: a.detector,
      severity: a.severity,
      points: a.points,
      mitre: a.mitre,
      description: a.description,
      decision: a.decision ?? null,
      standing: a.carries === true,
    })),
    kill_chains: input.killChains.map((k) => ({ type: k.type, subject: k.subject, window_ms: k.windowMs, stages: k.stages })),
  });
}
