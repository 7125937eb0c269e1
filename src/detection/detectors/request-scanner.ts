import type { Detector } from '../detector.js';

const ALERT_OF_CLASS = {
  sql_injection: 'request.sql_injection',
  xss: 'request.xss',
  path_traversal: 'request.path_traversal',
  command_injection: 'request.command_injection',
} as const;

/** request.<injection class> for each class request scanning found, request.scanner_user_agent for offensive tools. */
export const requestScanner: Detector = {
  name: 'request_scanner',
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
};
