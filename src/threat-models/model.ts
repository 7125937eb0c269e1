/**
 * A custom threat model as stored and returned by the API (the native format). A Sigma rule is
 * translated into this shape before it is validated, so both formats share one validator, one
 * compiler and one evaluator.
 */
import type { Severity } from '../event/classification.js';
import { PATTERN_LIMITS } from '../util/tenant-pattern.js';

export const CONDITION_OPS = [
  'equals',
  'in',
  'contains',
  'startswith',
  'endswith',
  'wildcard',
  'regex',
  'cidr',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'fieldref',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

export type Scalar = string | number | boolean | null;

/** One test of one field. `field: "*"` tests every string and number of the event (keyword search). */
export interface FieldCondition {
  readonly field: string;
  readonly op: ConditionOp;
  readonly value?: unknown;
  /** String ops compare without regard to case. */
  readonly ignore_case?: boolean;
  /** `regex` only: any of `i` (case-insensitive), `m` (multi-line), `s` (dot matches newline). */
  readonly flags?: string;
  /** `fieldref` only: how the field compares with the referenced one (default equals). */
  readonly compare?: 'equals' | 'contains' | 'startswith' | 'endswith';
}

export type Condition = FieldCondition | { readonly all: readonly Condition[] } | { readonly any: readonly Condition[] } | { readonly not: Condition };

export interface MatchSpec {
  /** Event type globs (`*` matches any characters, dots included); the event matches if any does. */
  readonly event: readonly string[];
  readonly where?: Condition;
}

export interface ThresholdSpec {
  /** Fires once the window holds this many matching events (or distinct values of `distinct`). */
  readonly count: number;
  readonly distinct?: string;
  readonly group_by?: readonly string[];
  readonly window_seconds: number;
}

export interface SequenceSpec {
  /** Steps after `match`, in order when `ordered`. */
  readonly then: readonly MatchSpec[];
  readonly ordered: boolean;
  readonly group_by?: readonly string[];
  readonly window_seconds: number;
}

export interface Outcome {
  /** `custom.<name>[.<name>…]` */
  readonly alert: string;
  readonly severity: Severity;
  readonly points: number;
  readonly tags: readonly string[];
}

export interface ThreatModelDefinition {
  readonly name: string;
  readonly enabled: boolean;
  readonly description?: string;
  readonly match: MatchSpec;
  readonly threshold?: ThresholdSpec;
  readonly sequence?: SequenceSpec;
  readonly outcome: Outcome;
}

/** Where a definition came from: written natively, or translated from a Sigma rule (kept verbatim). */
export type ModelSource = { readonly format: 'native' } | { readonly format: 'sigma'; readonly rule: string };

/** A stored model (current version). */
export interface ThreatModelRecord {
  readonly id: string;
  readonly accountId: string;
  readonly version: number;
  readonly definition: ThreatModelDefinition;
  readonly source: ModelSource;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface ThreatModelVersion {
  readonly modelId: string;
  readonly accountId: string;
  readonly version: number;
  readonly definition: ThreatModelDefinition;
  readonly source: ModelSource;
  readonly createdAt: number;
}

/** Documented limits (docs/guides/threat-models.md). */
export const LIMITS = Object.freeze({
  modelsPerAccount: 100,
  conditionsPerModel: 64,
  patternLength: PATTERN_LIMITS.patternLength,
  valuesPerList: 256,
  nestingDepth: 8,
  sequenceSteps: 5,
  windowSeconds: 7 * 24 * 3600,
  thresholdCount: 1000,
  distinctCount: 2000,
  groupByFields: 3,
  tags: 10,
  tagLength: 64,
  nameLength: 120,
  descriptionLength: 2000,
  sigmaRuleBytes: 64 * 1024,
  points: 100,
  /** RE2 instructions of one model's regular expressions together: compiling them is the cost of loading the model. */
  modelInstructions: 4_000,
  /** Estimated heap of one compiled model (see util/tenant-pattern.ts for how a pattern is counted). */
  modelMemoryBytes: 4 * 1024 * 1024,
  /** Estimated heap of every enabled model of an account together. */
  accountMemoryBytes: 24 * 1024 * 1024,
});

/** Default alert deduplication window when the model has no window of its own. */
export const DEFAULT_ALERT_WINDOW_SECONDS = 3600;
