import type { ClassifiedEvent, EnrichedEvent } from '../event/types.js';

/** GeoIP, ASN, threat intel, user agent, email, password and request scanning, in registration order. */
export type EnrichStage = (event: ClassifiedEvent) => EnrichedEvent;

/** The enrichment service opened at start (its data files stay loaded); the stage runs its enrichers. */
export function createEnrichStage(enrichment: { readonly enrich: EnrichStage }): EnrichStage {
  return enrichment.enrich;
}
