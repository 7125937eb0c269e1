import type { Severity } from './classification.js';

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
}
