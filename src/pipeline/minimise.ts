import type { EnrichedEvent } from '../event/types.js';
import { minimiseEvent } from '../privacy/minimise.js';
import { privacyOf } from '../privacy/minimise-settings.js';
import type { PseudonymKeys } from '../privacy/pseudonym.js';
import type { Enriched } from './request.js';
import type { Stage } from './stage.js';

/**
 * Replaces each admitted event's identifiers by what the account keeps of them (its `privacy`
 * settings): after enrichment, which reads the address as sent, and before detection, so the
 * detectors' state, the alerts and the stored rows all hold the same minimised values.
 */
export function minimiseStage(keys: PseudonymKeys): Stage<Enriched, Enriched> {
  return (request) => {
    const privacy = privacyOf(request.account.account.settings);
    if (!privacy.active) return request;
    const secret = keys.forAccount(request.account.account.id);
    const { enriched } = request;
    for (let n = 0; n < enriched.length; n++) minimiseEvent(enriched[n] as EnrichedEvent, privacy, secret);
    return request;
  };
}
