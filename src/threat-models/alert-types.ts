/**
 * Each threat model of an account raises its own alert type: alerts are kept per (type,
 * subject), so two models sharing a type would update each other's alerts and one model's
 * sighting would be reported with the other's id and severity.
 */
import type { ErrorDetail } from '../event/rejection.js';
import type { ThreatModelRow } from '../storage/types.js';
import type { ModelInputValue } from './input.js';
import { storedDefinition } from './stored.js';

/** The longest name part of an alert type (`custom.<part>[.<part>…]`). */
export const ALERT_TYPE_PART_LENGTH = 48;
/** How many numbered variants of a Sigma rule's type are tried before the rule is refused. */
const MAX_NUMBERED = 99;

/**
 * The candidate with an alert type no other model of the account raises. A type translated from
 * a Sigma rule's name is made unique with a number (`_2`, `_3`, …); a type the author chose is
 * refused, naming the model that raises it.
 */
export function withUniqueAlertType<T extends ModelInputValue>(
  rows: readonly ThreatModelRow[],
  candidate: T,
  candidateId?: string,
): { ok: true; value: T } | { ok: false; error: ErrorDetail } {
  const taken = new Map<string, ThreatModelRow>();
  for (const row of rows) if (row.id !== candidateId) taken.set(storedDefinition(row).outcome.alert, row);
  const wanted = candidate.definition.outcome.alert;
  const owner = taken.get(wanted);
  if (owner === undefined) return { ok: true, value: candidate };
  if (candidate.source.format === 'sigma') {
    const dot = wanted.lastIndexOf('.');
    const head = wanted.slice(0, dot + 1);
    const last = wanted.slice(dot + 1);
    for (let n = 2; n <= MAX_NUMBERED; n++) {
      const suffix = `_${n}`;
      const type = head + last.slice(0, ALERT_TYPE_PART_LENGTH - suffix.length) + suffix;
      if (!taken.has(type)) {
        const outcome = Object.assign({}, candidate.definition.outcome, { alert: type });
        const definition = Object.assign({}, candidate.definition, { outcome });
        return { ok: true, value: Object.assign({}, candidate, { definition }) };
      }
    }
  }
  return {
    ok: false,
    error: {
      field: 'outcome.alert',
      message: `alert type "${wanted}" is already raised by threat model ${owner.id} ("${storedDefinition(owner).name}"); each model of an account raises its own alert type: choose another`,
    },
  };
}
