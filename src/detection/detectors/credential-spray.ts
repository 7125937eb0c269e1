import { MINUTE, th, type Detector } from '../detector.js';
import { alertSpec } from '../specs.js';

const SPRAY = 'auth.credential_spray';

/**
 * auth.credential_spray: many distinct actors failing from one IP, not counting actors that then
 * logged in from it (typos behind a shared office or carrier address are not a spray);
 * auth.credential_stuffing_success: a success from an IP with an open spray alert.
 */
export const credentialSpray: Detector = {
  name: 'credential_spray',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined || (!f.loginFailure && !f.loginSuccess)) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const key = ctx.key('w', `ip:${f.ip}`);
    if (f.loginFailure) {
      if (f.actor === undefined) return;
      const slot = ctx.ops.add({ kind: 'distinct.add', key, field: 'spray', at: f.at, windowMs, member: f.actor });
      return (answers) => {
        const actors = answers.get(slot).distinct;
        const threshold = th(t, 'distinct_actors');
        if (actors >= threshold) ctx.raise(SPRAY, `ip:${f.ip}`, { distinct_actors: actors, threshold, window_minutes: th(t, 'window_minutes') });
      };
    }
    const spraying = ctx.ops.add({
      kind: 'alert.peek',
      key: ctx.alertKey(`ip:${f.ip}`),
      field: SPRAY,
      at: f.at,
      windowMs: alertSpec(SPRAY).windowMs ?? windowMs,
    });
    if (f.actor !== undefined) ctx.ops.add({ kind: 'distinct.add', key, field: 'spray', at: f.at, windowMs, member: f.actor, remove: true });
    return (answers) => {
      const alert = answers.get(spraying).alert;
      if (alert === null || alert.lastSeen > f.at) return;
      ctx.raise('auth.credential_stuffing_success', f.actor !== undefined ? `actor:${f.actor}` : `ip:${f.ip}`, {
        ip: f.ip,
        spray_alert: alert.id,
        spray_since: new Date(alert.firstSeen).toISOString(),
      });
    };
  },
};
