import type { ThreatModelRow } from '../storage/types.js';
import type { ModelSource, ThreatModelDefinition } from './model.js';

type Stored = Pick<ThreatModelRow, 'definition' | 'source'>;

/*
 * The store keeps a model's definition and source as JSON objects it does not interpret. Only the
 * threat-model routes write them, each time from a definition validateModel accepted, so reading
 * them back asserts their type here, once, rather than validating every row again on each load.
 */

export const storedDefinition = (row: Pick<Stored, 'definition'>): ThreatModelDefinition => row.definition as unknown as ThreatModelDefinition;

export const storedSource = (row: Pick<Stored, 'source'>): ModelSource => row.source as unknown as ModelSource;

/** The documents to store: plain JSON objects. */
export const toStored = (definition: ThreatModelDefinition, source: ModelSource): Stored => ({ definition: { ...definition }, source: { ...source } });
