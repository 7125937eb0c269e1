import type { EnrichContext, Enricher, EnrichmentDraft } from '../enrichment/enricher.js';
import type { ClassifiedEvent, EnrichedEvent } from '../event/types.js';

export type EnrichStage = (event: ClassifiedEvent) => EnrichedEvent;

export interface EnrichStageOptions {
  /** An enricher threw (a bug, not bad input): the event goes on without that enricher's fields. */
  readonly onError?: (enricher: string, err: unknown) => void;
}

/** Runs the registered enrichers in order; one enricher failing never fails the event. */
export function createEnrichStage(enrichers: readonly Enricher[] = [], options: EnrichStageOptions = {}): EnrichStage {
  const list = [...enrichers];
  return (event) => {
    const out: EnrichmentDraft = {};
    const ctx: EnrichContext = {};
    for (const enricher of list) {
      try {
        enricher.enrich(event, out, ctx);
      } catch (err) {
        options.onError?.(enricher.name, err);
      }
    }
    return { ...event, enrichment: out };
  };
}
