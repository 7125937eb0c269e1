import type { AlertWrite } from '../storage/types.js';
import type { AlertHit } from '../detection/types.js';
import type { AccountContext } from './account-context.js';
import type { EnrichedEvent } from './types.js';

export interface Detection {
  /** Alerts this event raised or updated, for the response and the score. */
  readonly alerts: readonly AlertHit[];
  /** Alert rows to write in the same commit as the event. */
  readonly writes: readonly AlertWrite[];
}

/** `eventId` is the stored id of the event, for the alert rows that reference it. */
export type DetectStage = (event: EnrichedEvent, ctx: AccountContext, eventId: string) => Promise<Detection>;

/** PLACEHOLDER until issue 5 lands. */
export function createDetectStage(): DetectStage {
  return async () => ({ alerts: [], writes: [] });
}
