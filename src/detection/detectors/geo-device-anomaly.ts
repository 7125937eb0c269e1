import { DAY, HOUR, th, type Detector } from '../detector.js';

/**
 * auth.new_country / auth.new_device: a successful login from a country or a browser/OS family
 * the actor has not used within memory_days, once the actor has min_known_logins behind them
 * (a first login is always "new"). Marks the session so a privilege change inside it is
 * recognised (session.privilege_change).
 */
export const geoDeviceAnomaly: Detector = {
  name: 'geo_device_anomaly',
  detect(ctx, t) {
    const f = ctx.facts;
    if (!f.loginSuccess || f.actor === undefined) return;
    const memoryMs = th(t, 'memory_days') * DAY;
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
      if (known < th(t, 'min_known_logins')) return;
      const novel: string[] = [];
      if (country !== undefined && !answers.get(country).seen) {
        ctx.raise('auth.new_country', f.actorSubject, { country: f.country, known_logins: known, memory_days: th(t, 'memory_days') });
        novel.push('country');
      }
      if (device !== undefined && !answers.get(device).seen) {
        ctx.raise('auth.new_device', f.actorSubject, { device: f.uaFamily, known_logins: known, memory_days: th(t, 'memory_days') });
        novel.push('device');
      }
      if (novel.length > 0 && f.session !== undefined) {
        const sessionMs = th(ctx.settings.thresholds('session_anomaly'), 'session_hours') * HOUR;
        ctx.after.add({ kind: 'last.swap', key: ctx.key('s', f.session), field: 'novel', at: f.at, value: novel, ttlMs: sessionMs });
      }
    };
  },
};
