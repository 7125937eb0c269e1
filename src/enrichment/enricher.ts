import type { ClassifiedEvent, EnrichedEvent } from '../event/types.js';
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

/** Runs the enrichers in order; one enricher failing (a bug, not bad input) never fails the event. */
export function runEnrichers(
  enrichers: readonly Enricher[],
  onError: (enricher: string, err: unknown) => void = () => undefined,
): (event: ClassifiedEvent) => EnrichedEvent {
  const list = [...enrichers];
  return (event) => {
    const out: EnrichmentDraft = {};
    const ctx: EnrichContext = {};
    for (const enricher of list) {
      try {
        enricher.enrich(event, out, ctx);
      } catch (err) {
        onError(enricher.name, err);
      }
    }
    return Object.assign(event, { enrichment: out });
  };
}
