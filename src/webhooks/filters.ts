import type { Severity } from '../catalog/types.js';
import { ALERT_TYPES } from '../detection/specs.js';
import type { AlertRow } from '../storage/types.js';
import { SEVERITIES, type EndpointFilter } from './types.js';

const KILL_CHAIN_TYPES: ReadonlySet<string> = new Set(ALERT_TYPES.filter((a) => a.detector === 'kill_chain').map((a) => a.type));

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
  if (filter.killChainsOnly && !KILL_CHAIN_TYPES.has(alert.type)) return false;
  return filter.alertTypes.length === 0 || filter.alertTypes.some((glob) => globMatches(glob, alert.type));
}
