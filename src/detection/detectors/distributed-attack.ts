import { MINUTE_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';

/**
 * auth.distributed_brute_force: many source IPs failing on one actor;
 * auth.botnet_campaign: many IPs with few tries each failing across the whole account, not
 * counting IPs that then logged in successfully (users who mistyped once are not bots).
 */
export const distributedAttack = defineDetector({
  name: 'distributed_attack',
  families: ['authentication', 'credential'],
  description: 'Counts distinct source IPs failing on one actor, and low-and-slow failures across the whole account.',
  thresholds: {
    distinct_ips: { default: 10, min: 2, max: 100_000, description: 'Distinct IPs failing on one actor within the window.' },
    botnet_distinct_ips: { default: 50, min: 2, max: 100_000, description: 'Distinct IPs with few tries each failing across the account within the window.' },
    botnet_max_tries: { default: 3, min: 1, max: 7, description: 'Most failures per IP that still counts as a botnet node.' },
    window_minutes: { default: 10, min: 1, max: 1440, description: 'Sliding window length in minutes.' },
  },
  alerts: {
    'auth.distributed_brute_force': {
      severity: 'high',
      mitre: ['T1110.001'],
      windowMs: 10 * MINUTE_MS,
      description:
        'Failed logins for one account came from many different IP addresses in a short window: a distributed attack that stays under per-IP limits.',
    },
    'auth.botnet_campaign': {
      severity: 'high',
      mitre: ['T1110.004', 'T1584.005'],
      windowMs: 10 * MINUTE_MS,
      description:
        'Many IP addresses, each trying only a few times, are failing logins across the account: a low-and-slow botnet campaign designed to evade per-IP counting.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined) return;
    const windowMs = t.window_minutes * MINUTE_MS;
    if (f.loginSuccess) {
      ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', 'account'), field: 'fail_ips', at: f.at, windowMs, member: f.ip, remove: true });
      return;
    }
    if (!f.loginFailure) return;
    const onActor =
      f.actor === undefined
        ? undefined
        : ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', f.actorSubject), field: 'ips', at: f.at, windowMs, member: f.ip });
    const botnetIps = t.botnet_distinct_ips;
    const acrossAccount = ctx.ops.add({
      kind: 'distinct.add',
      key: ctx.key('w', 'account'),
      field: 'fail_ips',
      at: f.at,
      windowMs,
      member: f.ip,
      fewTries: t.botnet_max_tries,
      maxMembers: Math.max(500, botnetIps * 4),
    });
    return (answers) => {
      if (onActor !== undefined) {
        const ips = answers.get(onActor).distinct;
        const threshold = t.distinct_ips;
        if (ips >= threshold) ctx.raise('auth.distributed_brute_force', f.actorSubject, { distinct_ips: ips, threshold, window_minutes: t.window_minutes });
      }
      const { few, distinct } = answers.get(acrossAccount);
      if (few >= botnetIps) {
        ctx.raise('auth.botnet_campaign', `account:${f.accountId}`, {
          low_rate_ips: few,
          failing_ips: distinct,
          threshold: botnetIps,
          max_tries: t.botnet_max_tries,
          window_minutes: t.window_minutes,
        });
      }
    };
  },
});
