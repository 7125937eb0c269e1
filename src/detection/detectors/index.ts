import type { Detector } from '../detector.js';
import { killChain } from '../kill-chains.js';
import { accountTakeoverSignals } from './account-takeover-signals.js';
import { apiAbuse } from './api-abuse.js';
import { breachedPassword } from './breached-password.js';
import { bruteForce } from './brute-force.js';
import { bulkExport } from './bulk-export.js';
import { containerSecurity } from './container-security.js';
import { credentialSpray } from './credential-spray.js';
import { disposableEmail } from './disposable-email.js';
import { distributedAttack } from './distributed-attack.js';
import { geoDeviceAnomaly } from './geo-device-anomaly.js';
import { hostIntegrity } from './host-integrity.js';
import { impossibleTravel } from './impossible-travel.js';
import { mfaTampering } from './mfa-tampering.js';
import { perimeter } from './perimeter.js';
import { privilegeEscalation } from './privilege-escalation.js';
import { requestScanner } from './request-scanner.js';
import { sessionAnomaly } from './session-anomaly.js';
import { sshBruteForce } from './ssh-brute-force.js';
import { suspiciousProcess } from './suspicious-process.js';
import { threatIntel } from './threat-intel.js';

/** A detector module: a detector of single events, or the kill chains that follow their alerts. */
export type DetectorModule = Detector | typeof killChain;

/**
 * Every detector, in the order the catalogue lists them. Registering a detector is adding its
 * module here; the catalogue, the settings, the scoring and the reference are derived from this list.
 */
export const DETECTOR_MODULES: readonly DetectorModule[] = [
  bruteForce,
  credentialSpray,
  distributedAttack,
  impossibleTravel,
  geoDeviceAnomaly,
  sessionAnomaly,
  mfaTampering,
  accountTakeoverSignals,
  privilegeEscalation,
  bulkExport,
  disposableEmail,
  breachedPassword,
  threatIntel,
  requestScanner,
  apiAbuse,
  sshBruteForce,
  hostIntegrity,
  suspiciousProcess,
  containerSecurity,
  perimeter,
  killChain,
];

/** The detectors of single events by name; kill_chain follows their alerts (kill-chains.ts). */
export const DETECTORS: ReadonlyMap<string, Detector> = new Map(DETECTOR_MODULES.flatMap((d) => ('detect' in d ? [[d.name, d] as const] : [])));
