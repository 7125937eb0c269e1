import type { ClassifiedEvent, EnrichedEvent } from './types.js';

export type EnrichStage = (event: ClassifiedEvent) => EnrichedEvent;

/** PLACEHOLDER until issue 4 lands: runs the registered enrichers in order. */
export function createEnrichStage(): EnrichStage {
  return (event) => ({ ...event, enrichment: {} });
}
