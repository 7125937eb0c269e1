import type { Severity } from '../event/classification.js';
import type { InjectionClass } from '../event/enrichment.js';

/** every number of the composite score in one place. */
export const SCORE_WEIGHTS = Object.freeze({
  max: 100,
  torExit: 25,
  blocklist: 30,
  hostingAsnOnAuth: 10,
  /** First injection class found by request scanning; each further class adds up to `injectionMax`. */
  injectionFirst: 20,
  injectionMax: 30,
  scannerUserAgent: 15,
  /** An injection payload sent by an offensive scanner is an attack in progress, not a probe alone. */
  injectionWithScanner: 15,
  automationUserAgent: 5,
});

export const SEVERITY_WEIGHTS: Readonly<Record<Severity, number>> = Object.freeze({ low: 10, medium: 20, high: 35, critical: 50 });

/** Order of the network lines when several classes are found. */
export const INJECTION_ORDER: readonly InjectionClass[] = ['sql_injection', 'command_injection', 'path_traversal', 'xss'];
