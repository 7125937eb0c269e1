import type { Severity } from '../../event/classification.js';
import type { AlertRow } from '../types.js';
import { SEVERITIES, type EndpointFilter } from './types.js';

/** Kill-chain alerts are the `chain.*` types. */
const isKillChain = (type: string): boolean => type.startsWith('chain.');

export const severityRank = (severity: string): number => SEVERITIES.indexOf(severity as Severity);

const globCache = new Map<string, RegExp>();

/** `*` matches any run of characters (dots included); everything else is literal. */
export function globMatches(glob: string, value: string): boolean {
  let re = globCache.get(glob);
  if (re === undefined) {
    re = new RegExp(
      `^${glob
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    if (globCache.size > 1000) globCache.clear();
    globCache.set(glob, re);
  }
  return re.test(value);
}

export function filterMatches(filter: EndpointFilter, alert: Pick<AlertRow, 'type' | 'severity'>): boolean {
  if (severityRank(alert.severity) < severityRank(filter.minSeverity)) return false;
  if (filter.killChainsOnly && !isKillChain(alert.type)) return false;
  return filter.alertTypes.length === 0 || filter.alertTypes.some((glob) => globMatches(glob, alert.type));
}
