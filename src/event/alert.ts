import type { AlertDecision, Severity } from './classification.js';

/** An alert raised or updated by one event, as returned in the 202 body and scored. */
export interface AlertHit {
  readonly id: string;
  readonly type: string;
  readonly severity: Severity;
  /** The subject the alert is deduplicated on, e.g. `actor:u1`, `ip:1.2.3.4`, `host:web1`. */
  readonly subject: string;
  /** true when this event opened the alert, false when it updated an open one. */
  readonly opened: boolean;
  /** Detector that raised it; threat_intel and request_scanner hits are not scored as behaviour. */
  readonly detector: string;
  /** Score points when the alert sets its own (custom threat models); otherwise its severity's weight. */
  readonly points?: number;
  /** Tags the alert adds to the event (custom threat models). */
  readonly tags?: readonly string[];
  /** The least action of this event because of the alert (built-in alert types; see AlertTypeSpec). */
  readonly decision?: AlertDecision;
}

/**
 * An alert opened by an earlier event of the same actor or session that is still open: it keeps
 * this event's action at `challenge` or above.
 */
export interface StandingAlert {
  readonly type: string;
  /** `actor:<id>` or `session:<id>`: what this event shares with the event that raised it. */
  readonly via: string;
  /** Event time (ms) until which it stands. */
  readonly until: number;
}
