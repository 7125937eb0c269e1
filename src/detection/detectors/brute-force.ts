import { MINUTE, th, type Detector } from '../detector.js';

/** auth.brute_force.account / .ip: failed logins per actor and per source IP in a sliding window. */
export const bruteForce: Detector = {
  name: 'brute_force',
  detect(ctx, t) {
    const f = ctx.facts;
    if (!f.loginFailure) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const byActor =
      f.actor === undefined ? undefined : ctx.ops.add({ kind: 'window.add', key: ctx.key('w', `actor:${f.actor}`), field: 'fail', at: f.at, windowMs });
    const byIp = f.ip === undefined ? undefined : ctx.ops.add({ kind: 'window.add', key: ctx.key('w', `ip:${f.ip}`), field: 'fail', at: f.at, windowMs });
    return (answers) => {
      const minutes = th(t, 'window_minutes');
      if (byActor !== undefined) {
        const failures = answers.get(byActor).sum;
        const threshold = th(t, 'account_failures');
        if (failures >= threshold)
          ctx.raise('auth.brute_force.account', `actor:${f.actor}`, { failures, threshold, window_minutes: minutes, ip: f.ip ?? null });
      }
      if (byIp !== undefined) {
        const failures = answers.get(byIp).sum;
        const threshold = th(t, 'ip_failures');
        if (failures >= threshold) ctx.raise('auth.brute_force.ip', `ip:${f.ip}`, { failures, threshold, window_minutes: minutes });
      }
    };
  },
};
