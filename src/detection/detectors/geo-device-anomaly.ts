import { HOUR_MS, DAY_MS } from '../../util/duration.js';
import { sessionAnomaly } from './session-anomaly.js';
import { defineDetector } from '../detector.js';

/**
 * auth.new_country / auth.new_device: a successful login from a country or a browser/OS family
 * the actor has not used within memory_days, once the actor has min_known_logins behind them
 * (a first login is always "new"). Marks the session so a privilege change inside it is
 * recognised (session.privilege_change).
 */
export const geoDeviceAnomaly = defineDetector({
  name: 'geo_device_anomaly',
  families: ['authentication'],
  description: 'Remembers the countries and device families each actor logs in from.',
  thresholds: {
    memory_days: { default: 90, min: 1, max: 730, description: 'How long a country or device stays known to an actor.' },
    min_known_logins: { default: 3, min: 0, max: 1000, description: 'Successful logins an actor needs before novelty is flagged.' },
  },
  alerts: {
    'auth.new_country': {
      severity: 'medium',
      mitre: ['T1078'],
      windowMs: HOUR_MS,
      description:
        'A user with an established login history logged in from a country not seen for them in the memory period. Usually travel, sometimes a stolen credential.',
    },
    'auth.new_device': {
      severity: 'low',
      mitre: ['T1078'],
      windowMs: HOUR_MS,
      description: 'A user with an established login history logged in with a browser and operating system family not seen for them before.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    if (!f.loginSuccess || f.actor === undefined) return;
    const memoryMs = t.memory_days * DAY_MS;
    const key = ctx.key('p', f.actorSubject);
    const logins = ctx.ops.add({ kind: 'counter.add', key, field: 'logins', at: f.at, amount: 1, ttlMs: memoryMs });
    const country =
      f.country === undefined || f.anonymising
        ? undefined
        : ctx.ops.add({ kind: 'seen.add', key, field: 'countries', member: f.country, at: f.at, withinMs: memoryMs, ttlMs: memoryMs });
    const device =
      f.uaFamily === undefined
        ? undefined
        : ctx.ops.add({ kind: 'seen.add', key, field: 'devices', member: f.uaFamily, at: f.at, withinMs: memoryMs, ttlMs: memoryMs });
    return (answers) => {
      const known = answers.get(logins).value - 1;
      if (known < t.min_known_logins) return;
      const novel: string[] = [];
      if (country !== undefined && !answers.get(country).seen) {
        ctx.raise('auth.new_country', f.actorSubject, { country: f.country, known_logins: known, memory_days: t.memory_days });
        novel.push('country');
      }
      if (device !== undefined && !answers.get(device).seen) {
        ctx.raise('auth.new_device', f.actorSubject, { device: f.uaFamily, known_logins: known, memory_days: t.memory_days });
        novel.push('device');
      }
      if (novel.length > 0 && f.session !== undefined) {
        const sessionMs = sessionAnomaly.thresholdsIn(ctx.settings).session_hours * HOUR_MS;
        ctx.after.add({ kind: 'last.swap', key: ctx.key('s', f.session), field: 'novel', at: f.at, value: novel, ttlMs: sessionMs });
      }
    };
  },
});
