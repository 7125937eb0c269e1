import { HOUR_MS } from '../../util/duration.js';
import { DETECTOR_FAMILIES } from '../../event/classification.js';
import { defineDetector } from '../detector.js';

const ALERT_OF_CLASS = {
  sql_injection: 'request.sql_injection',
  xss: 'request.xss',
  path_traversal: 'request.path_traversal',
  command_injection: 'request.command_injection',
} as const;

/** request.<injection class> for each class request scanning found, request.scanner_user_agent for offensive tools. */
export const requestScanner = defineDetector({
  name: 'request_scanner',
  families: DETECTOR_FAMILIES,
  description: 'Injection payloads found by request scanning and offensive scanner user agents.',
  generic: true,
  // The score's network lines count these findings.
  scored: false,
  // Findings impose no decision (null) and are left to the score: one payload alone is often a curious user.
  alerts: {
    'request.sql_injection': {
      severity: 'high',
      mitre: ['T1190'],
      windowMs: HOUR_MS,
      description: 'The request carried an SQL injection payload (in the path, query, user agent or metadata).',
      decision: null,
    },
    'request.xss': {
      severity: 'medium',
      mitre: ['T1189', 'T1059.007'],
      windowMs: HOUR_MS,
      description: 'The request carried a cross-site scripting payload.',
    },
    'request.path_traversal': {
      severity: 'high',
      mitre: ['T1190', 'T1083'],
      windowMs: HOUR_MS,
      description: 'The request tried to escape a directory with traversal sequences to read files it should not.',
      decision: null,
    },
    'request.command_injection': {
      severity: 'critical',
      mitre: ['T1190', 'T1059'],
      windowMs: HOUR_MS,
      description: 'The request carried an operating-system command injection payload.',
      decision: null,
    },
    'request.scanner_user_agent': {
      severity: 'medium',
      mitre: ['T1595.002'],
      windowMs: HOUR_MS,
      description: 'The request was made by an offensive security scanner (sqlmap, nikto, nuclei, ...).',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    const subject = f.ip !== undefined ? f.ipSubject : f.actor !== undefined ? f.actorSubject : `account:${f.accountId}`;
    const findings = f.event.enrichment.scan;
    if (findings !== undefined) {
      for (const finding of findings) {
        const locations = findings.filter((x) => x.class === finding.class).map((x) => x.location);
        // raise() keeps one alert per type and subject, so repeated classes collapse.
        ctx.raise(ALERT_OF_CLASS[finding.class], subject, { locations, path: f.event.request?.path ?? null });
      }
    }
    const scanner = f.event.enrichment.userAgent?.scanner;
    if (scanner !== undefined) ctx.raise('request.scanner_user_agent', subject, { scanner });
  },
});
