import type { ClassifiedEvent, EnrichedEvent } from '../event/types.js';
import type { Classified, Enriched } from './request.js';
import type { Stage } from './stage.js';

/** One event's enrichment: GeoIP, ASN, threat intel, user agent, email, password and request scanning, in registration order. */
export type EnrichStage = (event: ClassifiedEvent) => EnrichedEvent;

/** Enriches the admitted events with the enrichment service opened at start (its data files stay loaded). */
export function enrichStage(enrich: EnrichStage): Stage<Classified, Enriched> {
  return (request) => {
    const { classified } = request;
    const enriched: EnrichedEvent[] = [];
    for (let n = 0; n < classified.length; n++) enriched.push(enrich(classified[n] as ClassifiedEvent));
    return Object.assign(request, { enriched });
  };
}
