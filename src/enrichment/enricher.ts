import type { ClassifiedEvent } from '../event/types.js';
import type { Address } from '../util/ip.js';
import type { Enrichment } from '../event/enrichment.js';

export type EnrichmentDraft = { -readonly [K in keyof Enrichment]: Enrichment[K] };

/** Per-event scratch shared by enrichers; never part of the output. */
export interface EnrichContext {
  /** The event's address when it is public (set by the `network` enricher): the only ones looked up. */
  address?: Address;
}

/**
 * One enrichment step, registered by name. Enrichers run in registration order, synchronously
 * (no I/O per event except the on-disk breached-hash search), and write only their own fields.
 */
export interface Enricher {
  readonly name: string;
  enrich(event: ClassifiedEvent, out: EnrichmentDraft, ctx: EnrichContext): void;
}
