import { MINUTE_MS, HOUR_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';

const AFTER_FAILURES_WINDOW_MS = HOUR_MS;

/**
 * host.ssh_brute_force: SSH failures from one IP on one host in a window (the IP is marked; an
 * event with a repeat count counts as that many failures);
 * host.ssh_login_after_failures: an SSH success from a marked IP on that host.
 */
export const sshBruteForce = defineDetector({
  name: 'ssh_brute_force',
  families: ['host'],
  description: 'SSH failures per source IP per host (an agent event with `metadata.count` N counts as N failures), and a success from such an IP.',
  thresholds: {
    failures: { default: 10, min: 2, max: 100_000, description: 'SSH failures from one IP on one host within the window.' },
    window_minutes: { default: 5, min: 1, max: 1440, description: 'Sliding window length in minutes.' },
  },
  alerts: {
    'host.ssh_brute_force': {
      severity: 'high',
      mitre: ['T1110.001', 'T1021.004'],
      windowMs: 5 * MINUTE_MS,
      description: 'Many failed SSH logins from one address on one host in a short window.',
    },
    'host.ssh_login_after_failures': {
      severity: 'critical',
      mitre: ['T1110.001', 'T1021.004', 'T1078'],
      windowMs: AFTER_FAILURES_WINDOW_MS,
      description: 'An SSH login succeeded from an address that was just brute-forcing this host: the guessing probably worked.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.host === undefined || f.ip === undefined) return;
    const key = ctx.key('w', `host:${f.host}|ip:${f.ip}`);
    if (f.type === 'server.ssh.login.failure') {
      const slot = ctx.ops.add({ kind: 'window.add', key, field: 'ssh_fail', at: f.at, windowMs: t.window_minutes * MINUTE_MS, amount: f.repeats });
      return (answers) => {
        const failures = answers.get(slot).sum;
        if (failures < t.failures) return;
        ctx.raise('host.ssh_brute_force', `host:${f.host}`, {
          ip: f.ip,
          failures,
          threshold: t.failures,
          window_minutes: t.window_minutes,
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
});
