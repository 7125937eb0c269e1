import { isAuthEvent } from '../catalog/auth-event.js';
import type { DetectedEvent } from '../event/types.js';
import { actionOf, levelOf, type RiskThresholds } from './thresholds.js';
import type { BreakdownLine, Risk } from '../event/risk.js';
import type { InjectionClass } from '../event/enrichment.js';
import { INJECTION_ORDER, SCORE_WEIGHTS as W, SEVERITY_WEIGHTS } from './weights.js';
import { UNSCORED_DETECTORS } from '../detection/specs.js';

/** The network line of each injection class, made once. */
const NETWORK_SOURCE = Object.fromEntries(INJECTION_ORDER.map((cls) => [cls, `network.${cls}`])) as Record<InjectionClass, string>;

/** Lines gathered for one event, and their sum: one per event instead of a closure per event. */
class Lines {
  readonly list: BreakdownLine[] = [];
  total = 0;

  add(source: string, points: number): void {
    if (points <= 0) return;
    this.list.push({ source, points });
    this.total += points;
  }
}

/**
 * The least score the event's alerts impose: the threshold of the strongest decision among the
 * alerts it raised (`floor.<type>`) and the alert standing over its actor or session
 * (`floor.standing.<type>`, at `challenge`).
 */
function decisionFloor(event: DetectedEvent, thresholds: RiskThresholds): { score: number; source: string } | undefined {
  let floor: { score: number; source: string } | undefined;
  for (const alert of event.alerts) {
    if (alert.decision === undefined) continue;
    const score = thresholds[alert.decision];
    if (floor === undefined || score > floor.score) floor = { score, source: `floor.${alert.type}` };
  }
  const standing = event.standing;
  if (standing !== undefined && (floor === undefined || thresholds.challenge > floor.score))
    floor = { score: thresholds.challenge, source: `floor.standing.${standing.type}` };
  return floor;
}

/**
 * min(100, base + threat intel + network flags + behavioural), one breakdown line per
 * source, raised to the floor the alerts set (decisionFloor). When the sum passes 100 a final `cap` line (negative) brings it back, so the lines
 * always add up to the score and each signal still shows its full weight.
 */
export function compositeRisk(event: DetectedEvent, thresholds: RiskThresholds): Risk {
  const lines = new Lines();

  lines.add('base', event.classification.baseScore);

  const { threat, scan, userAgent } = event.enrichment;
  if (threat) {
    if (threat.torExit) lines.add('threat_intel.tor_exit', W.torExit);
    if (threat.blocklists.length > 0) lines.add('threat_intel.blocklist', W.blocklist);
    if (threat.hostingAsn && isAuthEvent(event.type, event.classification)) lines.add('threat_intel.hosting_asn', W.hostingAsnOnAuth);
  }

  if (scan && scan.length > 0) {
    let injection = 0;
    for (const cls of INJECTION_ORDER) {
      if (!scan.some((f) => f.class === cls)) continue;
      const points = injection === 0 ? W.injectionFirst : W.injectionMax - injection;
      lines.add(NETWORK_SOURCE[cls], points);
      injection += points;
    }
  }
  if (userAgent?.scanner) {
    lines.add('network.scanner_user_agent', W.scannerUserAgent);
    if (scan && scan.length > 0) lines.add('network.scanner_with_injection', W.injectionWithScanner);
  } else if (userAgent?.automated) lines.add('network.automation_user_agent', W.automationUserAgent);

  for (const alert of event.alerts) {
    if (!UNSCORED_DETECTORS.has(alert.detector)) lines.add(`alert.${alert.type}`, alert.points ?? SEVERITY_WEIGHTS[alert.severity] ?? 0);
  }

  let total = lines.total;
  if (total > W.max) {
    lines.list.push({ source: 'cap', points: W.max - total });
    total = W.max;
  }
  const floor = decisionFloor(event, thresholds);
  if (floor !== undefined && total < floor.score) {
    lines.add(floor.source, floor.score - total);
    total = floor.score;
  }
  return { score: total, level: levelOf(total), action: actionOf(total, thresholds), breakdown: lines.list };
}
