import { MINUTE, th, type Detector } from '../detector.js';

/**
 * auth.credential_spray: many distinct actors failing from one IP;
 * auth.credential_stuffing_success: a success from an IP that is spraying right now.
 */
export const credentialSpray: Detector = {
  name: 'credential_spray',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined || (!f.loginFailure && !f.loginSuccess)) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const key = ctx.key('w', `ip:${f.ip}`);
    const threshold = th(t, 'distinct_actors');
    if (f.loginFailure) {
      if (f.actor === undefined) return;
      const slot = ctx.ops.add({ kind: 'distinct.add', key, field: 'spray', at: f.at, windowMs, member: f.actor });
      return (answers) => {
        const actors = answers.get(slot).distinct;
        if (actors >= threshold) ctx.raise('auth.credential_spray', `ip:${f.ip}`, { distinct_actors: actors, threshold, window_minutes: th(t, 'window_minutes') });
      };
    }
    const slot = ctx.ops.add({ kind: 'distinct.add', key, field: 'spray', at: f.at, windowMs });
    return (answers) => {
      const actors = answers.get(slot).distinct;
      if (actors >= threshold) ctx.raise('auth.credential_stuffing_success', f.actor !== undefined ? `actor:${f.actor}` : `ip:${f.ip}`, { ip: f.ip, failing_actors: actors, threshold });
    };
  },
};
