import type { Classification } from '../../src/event/classification.js';
import type { ClassifiedEvent, ValidatedEvent } from '../../src/event/types.js';

export const silentLogger = { warn: () => undefined, info: () => undefined };

const NONE: Classification = { predefined: false, baseScore: 0, inferred: [], families: new Set(), detectors: [] };

export function classified(fields: Partial<ValidatedEvent> = {}, classification: Classification = NONE): ClassifiedEvent {
  return { type: 'auth.login.success', occurredAt: 0, receivedAt: 0, metadata: {}, ...fields, classification };
}
