import { MINUTE_MS } from '../../util/duration.js';
import { defineDetector, type AlertDecl, type DetectContext, type Judge, type Slot, type ThresholdValues } from '../detector.js';
import type { AlertPeekResult, WindowResult } from '../state/state-store.js';
import { credentialSpray } from './credential-spray.js';
import { distributedAttack } from './distributed-attack.js';

const ALERTS = {
  'auth.brute_force.account': {
    severity: 'high',
    mitre: ['T1110.001'],
    windowMs: 5 * MINUTE_MS,
    description:
      "Many failed logins for one account in a short window: someone is guessing this account's password. Check whether a success followed, and consider locking the account or requiring MFA.",
  },
  'auth.brute_force.ip': {
    severity: 'high',
    mitre: ['T1110.001', 'T1110.003'],
    windowMs: 5 * MINUTE_MS,
    description:
      'Many failed logins from one IP address in a short window, whatever the accounts: an automated password-guessing source. Block or challenge the address.',
  },
  'auth.login_after_failures': {
    severity: 'high',
    mitre: ['T1110.001', 'T1078'],
    windowMs: 30 * MINUTE_MS,
    description:
      'A login succeeded for an account after repeated failed logins within half an hour, too few or too slow for a brute-force alert: the password may have been guessed. Confirm the login with the user.',
  },
} as const satisfies Readonly<Record<string, AlertDecl>>;

/** Open alerts under which a successful login means the guessing probably worked, by subject. */
const GUESSING_ALERTS = {
  actor: [
    { type: 'auth.brute_force.account', windowMs: ALERTS['auth.brute_force.account'].windowMs },
    { type: 'auth.distributed_brute_force', windowMs: distributedAttack.alerts['auth.distributed_brute_force'].windowMs },
  ],
  ip: [{ type: 'auth.brute_force.ip', windowMs: ALERTS['auth.brute_force.ip'].windowMs }],
} as const;
/** A success from a spraying IP is credential_spray's stuffing success; it is not raised twice. */
const SPRAY = 'auth.credential_spray';
const SPRAY_WINDOW_MS = credentialSpray.alerts[SPRAY].windowMs;
/** The actor's failures over the longer success window (a slow brute force stays under the alert). */
const RECENT_FAILURES = 'fail_recent';

/**
 * auth.brute_force.account / .ip: failed logins per actor and per source IP in a sliding window.
 * auth.credential_stuffing_success: a successful login for an actor, or from an IP, that has an open
 * brute-force alert (a success from a spraying IP is credential_spray's stuffing success).
 * auth.login_after_failures: otherwise, a success of an actor with success_after_failures or more
 * failures within success_window_minutes; the count starts again after each success.
 */
export const bruteForce = defineDetector({
  name: 'brute_force',
  families: ['authentication', 'credential'],
  description:
    'Counts failed logins per actor and per source IP in a sliding window; flags a later success for that actor or from that IP, and a success after repeated failures of the actor.',
  thresholds: {
    account_failures: { default: 10, min: 2, max: 100_000, description: 'Failed logins of one actor within the window that raise auth.brute_force.account.' },
    ip_failures: { default: 20, min: 2, max: 100_000, description: 'Failed logins from one IP within the window that raise auth.brute_force.ip.' },
    window_minutes: { default: 5, min: 1, max: 1440, description: 'Sliding window length in minutes.' },
    success_after_failures: {
      default: 5,
      min: 2,
      max: 100_000,
      description: 'Failed logins of one actor within the success window after which a success raises auth.login_after_failures.',
    },
    success_window_minutes: { default: 30, min: 1, max: 1440, description: 'How far back a success looks for failed logins of the same actor.' },
  },
  alerts: ALERTS,
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.loginSuccess) return detectSuccess(ctx, t);
    if (!f.loginFailure) return;
    const windowMs = t.window_minutes * MINUTE_MS;
    const byActor =
      f.actor === undefined ? undefined : ctx.ops.add({ kind: 'window.add', key: ctx.key('w', f.actorSubject), field: 'fail', at: f.at, windowMs });
    if (f.actor !== undefined)
      ctx.ops.add({
        kind: 'window.add',
        key: ctx.key('w', f.actorSubject),
        field: RECENT_FAILURES,
        at: f.at,
        windowMs: t.success_window_minutes * MINUTE_MS,
      });
    const byIp = f.ip === undefined ? undefined : ctx.ops.add({ kind: 'window.add', key: ctx.key('w', f.ipSubject), field: 'fail', at: f.at, windowMs });
    return (answers) => {
      const minutes = t.window_minutes;
      if (byActor !== undefined) {
        const failures = answers.get(byActor).sum;
        const threshold = t.account_failures;
        if (failures >= threshold) ctx.raise('auth.brute_force.account', f.actorSubject, { failures, threshold, window_minutes: minutes, ip: f.ip ?? null });
      }
      if (byIp !== undefined) {
        const failures = answers.get(byIp).sum;
        const threshold = t.ip_failures;
        if (failures >= threshold) ctx.raise('auth.brute_force.ip', f.ipSubject, { failures, threshold, window_minutes: minutes });
      }
    };
  },
});

function detectSuccess(ctx: DetectContext, t: ThresholdValues<'success_after_failures' | 'success_window_minutes'>): Judge | undefined {
  const f = ctx.facts;
  let recent: Slot<WindowResult> | undefined;
  if (f.actor !== undefined) {
    const key = ctx.key('w', f.actorSubject);
    recent = ctx.ops.add({ kind: 'window.add', key, field: RECENT_FAILURES, at: f.at, windowMs: t.success_window_minutes * MINUTE_MS, amount: 0 });
    ctx.ops.add({ kind: 'delete', key, field: RECENT_FAILURES });
  }
  const peeks: { type: string; slot: Slot<AlertPeekResult> }[] = [];
  const peek = (subject: string, alerts: readonly { type: string; windowMs: number }[]): void => {
    for (const { type, windowMs } of alerts) {
      const slot = ctx.ops.add({ kind: 'alert.peek', key: ctx.alertKey(subject), field: type, at: f.at, windowMs });
      peeks.push({ type, slot });
    }
  };
  if (f.actor !== undefined) peek(f.actorSubject, GUESSING_ALERTS.actor);
  if (f.ip !== undefined) peek(f.ipSubject, GUESSING_ALERTS.ip);
  if (peeks.length === 0) return undefined;
  const spraying =
    f.ip === undefined ? undefined : ctx.ops.add({ kind: 'alert.peek', key: ctx.alertKey(f.ipSubject), field: SPRAY, at: f.at, windowMs: SPRAY_WINDOW_MS });
  return (answers) => {
    const spray = spraying === undefined ? null : answers.get(spraying).alert;
    if (spray !== null && spray.lastSeen <= f.at) return;
    for (const { type, slot } of peeks) {
      const alert = answers.get(slot).alert;
      if (alert === null || alert.lastSeen > f.at) continue;
      ctx.raise('auth.credential_stuffing_success', f.actor !== undefined ? f.actorSubject : f.ipSubject, {
        ip: f.ip ?? null,
        guessing_alert: type,
        guessing_alert_id: alert.id,
        guessing_since: new Date(alert.firstSeen).toISOString(),
      });
      return;
    }
    const failures = recent === undefined ? 0 : answers.get(recent).sum;
    if (failures >= t.success_after_failures)
      ctx.raise('auth.login_after_failures', f.actorSubject, {
        ip: f.ip ?? null,
        failures,
        threshold: t.success_after_failures,
        window_minutes: t.success_window_minutes,
      });
  };
}
