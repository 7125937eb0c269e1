import { HOUR_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';
import type { EventFacts } from '../facts.js';
import type { Slot } from '../detector.js';
import type { LastResult, SeenResult } from '../state/state-store.js';

const ROLE_CHANGE_TYPES = new Set(['account.role.changed', 'data.permission.changed', 'admin.role.created', 'admin.role.deleted']);
export const isRoleChange = (f: EventFacts): boolean => ROLE_CHANGE_TYPES.has(f.type) || f.has('role.change');

/**
 * session.hijack_suspected: one session id used from two countries or two user-agent families.
 * session.privilege_change: a role or permission change inside a session that began with a
 * login from a new country or device (marked by geo_device_anomaly).
 */
export const sessionAnomaly = defineDetector({
  name: 'session_anomaly',
  families: ['authentication', 'credential', 'session', 'account', 'privilege', 'data', 'admin', 'api'],
  description: 'Tracks each session id: countries and user-agent families it is used from, and privilege changes within a session begun from a new place.',
  thresholds: {
    session_hours: { default: 24, min: 1, max: 720, description: 'How long a session id is tracked after it was last used.' },
  },
  alerts: {
    'session.hijack_suspected': {
      severity: 'high',
      mitre: ['T1185', 'T1550.004'],
      windowMs: HOUR_MS,
      description:
        'The same session id was used from two countries or two different user-agent families: the session token was probably copied to another machine.',
    },
    'session.privilege_change': {
      severity: 'high',
      mitre: ['T1078', 'T1098'],
      windowMs: HOUR_MS,
      description: 'Roles or permissions were changed within a session that began from a new country or device.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.session === undefined) return;
    const sessionMs = t.session_hours * HOUR_MS;
    const key = ctx.key('s', f.session);
    let country: Slot<SeenResult> | undefined;
    let device: Slot<SeenResult> | undefined;
    let novel: Slot<LastResult> | undefined;
    // An anonymising hop says nothing about where the session holder is.
    if (f.country !== undefined && !f.anonymising)
      country = ctx.ops.add({ kind: 'seen.add', key, field: 'countries', member: f.country, at: f.at, withinMs: sessionMs, ttlMs: sessionMs });
    if (f.uaFamily !== undefined)
      device = ctx.ops.add({ kind: 'seen.add', key, field: 'devices', member: f.uaFamily, at: f.at, withinMs: sessionMs, ttlMs: sessionMs });
    if (isRoleChange(f)) novel = ctx.ops.add({ kind: 'last.swap', key, field: 'novel', at: f.at, ttlMs: sessionMs });
    if (country === undefined && device === undefined && novel === undefined) return;
    return (answers) => {
      const subject = `session:${f.session}`;
      const c = country === undefined ? undefined : answers.get(country);
      const d = device === undefined ? undefined : answers.get(device);
      const newCountry = c !== undefined && !c.seen && c.size >= 2;
      const newDevice = d !== undefined && !d.seen && d.size >= 2;
      if (newCountry || newDevice) {
        ctx.raise('session.hijack_suspected', subject, {
          reason: newCountry ? 'second_country' : 'second_user_agent_family',
          country: f.country ?? null,
          device: f.uaFamily ?? null,
          countries_seen: c?.size ?? null,
          devices_seen: d?.size ?? null,
          actor: f.actor ?? null,
        });
      }
      const marker = novel === undefined ? null : answers.get(novel).previous;
      if (marker !== null)
        ctx.raise('session.privilege_change', subject, {
          change: f.type,
          session_began_from_new: marker.value,
          session_login_at: new Date(marker.at).toISOString(),
          actor: f.actor ?? null,
        });
    };
  },
});
