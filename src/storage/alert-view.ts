import type { AlertRow } from './types.js';

/** An alert as the API shows it (read routes and webhook payloads). */
export const alertView = (a: AlertRow) => ({
  id: a.id,
  type: a.type,
  severity: a.severity,
  status: a.status,
  subject: a.subject,
  actor_id: a.actorId,
  count: a.count,
  first_seen: new Date(a.firstSeen).toISOString(),
  last_seen: new Date(a.lastSeen).toISOString(),
  event_ids: a.eventIds,
  details: a.details,
});
