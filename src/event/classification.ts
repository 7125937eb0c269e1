export const DETECTOR_FAMILIES = ['authentication', 'credential', 'session', 'account', 'privilege', 'data', 'admin', 'api', 'host', 'perimeter'] as const;
export type DetectorFamily = (typeof DETECTOR_FAMILIES)[number];

export const INFERRED_TYPES = [
  'auth.failure',
  'auth.success',
  'auth.logout',
  'data.export',
  'account.create',
  'account.delete',
  'role.change',
  'mfa.event',
  'password.event',
  'rate.limited',
] as const;
export type InferredType = (typeof INFERRED_TYPES)[number];

export type Severity = 'low' | 'medium' | 'high' | 'critical';

/** What the classify stage learns about an event from the catalog. */
export interface Classification {
  /** true for the 98 predefined types (67 standard, 28 agent and 3 additional agent types). */
  readonly predefined: boolean;
  readonly baseScore: number;
  /** Inferred types that matched, without the `inferred:` prefix. */
  readonly inferred: readonly InferredType[];
  /** Union of the families of the type and of every inferred type. */
  readonly families: ReadonlySet<DetectorFamily>;
  /** Names of the detectors that can fire on this event, fixed at start-up per type. */
  readonly detectors: readonly string[];
}

/** A per-account tunable number of a detector (defaults overridable per account). */
export interface ThresholdSpec {
  readonly name: string;
  readonly default: number;
  readonly min: number;
  readonly max: number;
  readonly description: string;
}

/** A detector's declaration: the catalog dispatches an event only to detectors whose families it has. */
export interface DetectorSpec {
  readonly name: string;
  readonly families: readonly DetectorFamily[];
  readonly description: string;
  readonly alertTypes: readonly string[];
  /** Runs on every event, `custom.*` included (threat_intel, request_scanner). */
  readonly generic?: boolean;
  /** Settings under `settings.detectors.<name>`, with their documented defaults. */
  readonly thresholds?: readonly ThresholdSpec[];
}

export interface AlertTypeSpec {
  readonly type: string;
  readonly detector: string;
  readonly severity: Severity;
  /** Score contribution (low 10, medium 20, high 35, critical 50). */
  readonly points: number;
  /** MITRE ATT&CK technique ids, e.g. T1110.001. */
  readonly mitre: readonly string[];
  readonly description: string;
  /** Deduplication window: a new sighting within this time of the last one updates the open alert. */
  readonly windowMs?: number;
  /** The least risk action of the event that raises the alert, whatever its score adds up to. */
  readonly decision?: AlertDecision;
  /** While the alert is open, later events of the same actor or session get at least `challenge`. */
  readonly carries?: boolean;
}

/** The least action an alert imposes: the account's challenge or block threshold becomes the score's floor. */
export type AlertDecision = 'challenge' | 'block';

export interface KillChainSpec {
  readonly type: string;
  readonly subject: 'actor' | 'host';
  readonly windowMs: number;
  readonly stages: readonly { readonly name: string; readonly description: string }[];
}

export interface CatalogInput {
  readonly detectors: readonly DetectorSpec[];
  readonly alertTypes: readonly AlertTypeSpec[];
  readonly killChains: readonly KillChainSpec[];
}
