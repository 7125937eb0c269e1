import { MINUTE, th, type Detector } from '../detector.js';

/**
 * auth.distributed_brute_force: many source IPs failing on one actor;
 * auth.botnet_campaign: many IPs with few tries each failing across the whole account, not
 * counting IPs that then logged in successfully (users who mistyped once are not bots).
 */
export const distributedAttack: Detector = {
  name: 'distributed_attack',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.ip === undefined) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    if (f.loginSuccess) {
      ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', 'account'), field: 'fail_ips', at: f.at, windowMs, member: f.ip, remove: true });
      return;
    }
    if (!f.loginFailure) return;
    const onActor =
      f.actor === undefined
        ? undefined
        : ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', f.actorSubject), field: 'ips', at: f.at, windowMs, member: f.ip });
    const botnetIps = th(t, 'botnet_distinct_ips');
    const acrossAccount = ctx.ops.add({
      kind: 'distinct.add',
      key: ctx.key('w', 'account'),
      field: 'fail_ips',
      at: f.at,
      windowMs,
      member: f.ip,
      fewTries: th(t, 'botnet_max_tries'),
      maxMembers: Math.max(500, botnetIps * 4),
    });
    return (answers) => {
      if (onActor !== undefined) {
        const ips = answers.get(onActor).distinct;
        const threshold = th(t, 'distinct_ips');
        if (ips >= threshold)
          ctx.raise('auth.distributed_brute_force', f.actorSubject, { distinct_ips: ips, threshold, window_minutes: th(t, 'window_minutes') });
      }
      const { few, distinct } = answers.get(acrossAccount);
      if (few >= botnetIps) {
        ctx.raise('auth.botnet_campaign', `account:${f.accountId}`, {
          low_rate_ips: few,
          failing_ips: distinct,
          threshold: botnetIps,
          max_tries: th(t, 'botnet_max_tries'),
          window_minutes: th(t, 'window_minutes'),
        });
      }
    };
  },
};
