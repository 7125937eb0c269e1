import { HOUR, MINUTE, th, type Detector } from '../detector.js';
import { alertSpec } from '../specs.js';

const AFTER_FAILURES_WINDOW_MS = alertSpec('host.ssh_login_after_failures').windowMs ?? HOUR;

/**
 * host.ssh_brute_force: SSH failures from one IP on one host in a window (the IP is marked);
 * host.ssh_login_after_failures: an SSH success from a marked IP on that host.
 */
export const sshBruteForce: Detector = {
  name: 'ssh_brute_force',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.host === undefined || f.ip === undefined) return;
    const key = ctx.key('w', `host:${f.host}|ip:${f.ip}`);
    if (f.type === 'server.ssh.login.failure') {
      const slot = ctx.ops.add({ kind: 'window.add', key, field: 'ssh_fail', at: f.at, windowMs: th(t, 'window_minutes') * MINUTE });
      return (answers) => {
        const failures = answers.get(slot).sum;
        if (failures < th(t, 'failures')) return;
        ctx.raise('host.ssh_brute_force', `host:${f.host}`, {
          ip: f.ip,
          failures,
          threshold: th(t, 'failures'),
          window_minutes: th(t, 'window_minutes'),
          user: f.actor ?? null,
        });
        ctx.after.add({ kind: 'last.swap', key, field: 'ssh_brute', at: f.at, value: failures, ttlMs: AFTER_FAILURES_WINDOW_MS });
      };
    }
    if (f.type !== 'server.ssh.login.success') return;
    const slot = ctx.ops.add({ kind: 'last.swap', key, field: 'ssh_brute', at: f.at, ttlMs: AFTER_FAILURES_WINDOW_MS });
    return (answers) => {
      const mark = answers.get(slot).previous;
      if (mark === null || mark.at > f.at || f.at - mark.at > AFTER_FAILURES_WINDOW_MS) return;
      ctx.raise('host.ssh_login_after_failures', `host:${f.host}`, {
        ip: f.ip,
        user: f.actor ?? null,
        failures: mark.value,
        brute_force_at: new Date(mark.at).toISOString(),
      });
    };
  },
};
