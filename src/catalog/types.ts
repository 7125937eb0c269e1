export const DETECTOR_FAMILIES = [
  'authentication',
  'credential',
  'session',
  'account',
  'privilege',
  'data',
  'admin',
  'api',
  'host',
  'perimeter',
] as const;
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
  /** true for the 95 predefined types (67 standard + 28 agent). */
  readonly predefined: boolean;
  readonly baseScore: number;
  /** Inferred types that matched, without the `inferred:` prefix. */
  readonly inferred: readonly InferredType[];
  /** Union of the families of the type and of every inferred type. */
  readonly families: ReadonlySet<DetectorFamily>;
  /** Names of the detectors that can fire on this event, fixed at start-up per type. */
  readonly detectors: readonly string[];
}
