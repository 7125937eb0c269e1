import type { Severity } from '../../event/classification.js';
import { GlobCache } from '../../util/tenant-pattern.js';
import type { AlertRow } from '../types.js';
import { SEVERITIES, type EndpointFilter } from './types.js';

/** Kill-chain alerts are the `chain.*` types. */
const isKillChain = (type: string): boolean => type.startsWith('chain.');

export const severityRank = (severity: string): number => SEVERITIES.indexOf(severity as Severity);

const alertTypeGlobs = new GlobCache();

/** `*` matches any run of characters (dots included); everything else is literal. */
export const globMatches = (glob: string, value: string): boolean => alertTypeGlobs.matches(glob, value);

export function filterMatches(filter: EndpointFilter, alert: Pick<AlertRow, 'type' | 'severity'>): boolean {
  if (severityRank(alert.severity) < severityRank(filter.minSeverity)) return false;
  if (filter.killChainsOnly && !isKillChain(alert.type)) return false;
  return filter.alertTypes.length === 0 || filter.alertTypes.some((glob) => globMatches(glob, alert.type));
}
