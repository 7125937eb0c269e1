import { snakeCaseKeys } from '../util/snake-case.js';
import type { EventRow } from './types.js';

/**
 * An event as the API shows it (GET /v1/events and the live stream). Events stored by earlier
 * versions hold their enrichment in camelCase: it is answered in snake_case like the rest.
 */
export const eventView = (row: Pick<EventRow, 'id' | 'doc'>): Record<string, unknown> =>
  row.doc.enrichment === undefined ? { ...row.doc, id: row.id } : { ...row.doc, enrichment: snakeCaseKeys(row.doc.enrichment), id: row.id };
