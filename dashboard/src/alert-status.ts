import type { AlertStatus } from './api';

/** The statuses of an alert with their labels, in triage order. */
export const STATUSES: readonly [AlertStatus, string][] = [
  ['open', 'Open'],
  ['acknowledged', 'Acknowledged'],
  ['resolved', 'Resolved'],
  ['false_positive', 'False positive'],
];
export const statusLabel = (s: string) => STATUSES.find(([v]) => v === s)?.[1] ?? s;
