import { MINUTE, th, type DetectContext, type Detector, type Judge, type Slot, type Thresholds } from '../detector.js';
import type { AlertPeekResult, WindowResult } from '../state/state-store.js';
import { alertSpec } from '../specs.js';

/** Open alerts under which a successful login means the guessing probably worked, by subject. */
const GUESSING_ALERTS = {
  actor: ['auth.brute_force.account', 'auth.distributed_brute_force'],
  ip: ['auth.brute_force.ip'],
} as const;
/** A success from a spraying IP is credential_spray's stuffing success; it is not raised twice. */
const SPRAY = 'auth.credential_spray';
/** The actor's failures over the longer success window (a slow brute force stays under the alert). */
const RECENT_FAILURES = 'fail_recent';

/**
 * auth.brute_force.account / .ip: failed logins per actor and per source IP in a sliding window.
 * auth.credential_stuffing_success: a successful login for an actor, or from an IP, that has an open
 * brute-force alert (a success from a spraying IP is credential_spray's stuffing success).
 * auth.login_after_failures: otherwise, a success of an actor with success_after_failures or more
 * failures within success_window_minutes; the count starts again after each success.
 */
export const bruteForce: Detector = {
  name: 'brute_force',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.loginSuccess) return detectSuccess(ctx, t);
    if (!f.loginFailure) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const byActor =
      f.actor === undefined ? undefined : ctx.ops.add({ kind: 'window.add', key: ctx.key('w', f.actorSubject), field: 'fail', at: f.at, windowMs });
    if (f.actor !== undefined)
      ctx.ops.add({
        kind: 'window.add',
        key: ctx.key('w', f.actorSubject),
        field: RECENT_FAILURES,
        at: f.at,
        windowMs: th(t, 'success_window_minutes') * MINUTE,
      });
    const byIp = f.ip === undefined ? undefined : ctx.ops.add({ kind: 'window.add', key: ctx.key('w', f.ipSubject), field: 'fail', at: f.at, windowMs });
    return (answers) => {
      const minutes = th(t, 'window_minutes');
      if (byActor !== undefined) {
        const failures = answers.get(byActor).sum;
        const threshold = th(t, 'account_failures');
        if (failures >= threshold) ctx.raise('auth.brute_force.account', f.actorSubject, { failures, threshold, window_minutes: minutes, ip: f.ip ?? null });
      }
      if (byIp !== undefined) {
        const failures = answers.get(byIp).sum;
        const threshold = th(t, 'ip_failures');
        if (failures >= threshold) ctx.raise('auth.brute_force.ip', f.ipSubject, { failures, threshold, window_minutes: minutes });
      }
    };
  },
};

function detectSuccess(ctx: DetectContext, t: Thresholds): Judge | undefined {
  const f = ctx.facts;
  let recent: Slot<WindowResult> | undefined;
  if (f.actor !== undefined) {
    const key = ctx.key('w', f.actorSubject);
    recent = ctx.ops.add({ kind: 'window.add', key, field: RECENT_FAILURES, at: f.at, windowMs: th(t, 'success_window_minutes') * MINUTE, amount: 0 });
    ctx.ops.add({ kind: 'delete', key, field: RECENT_FAILURES });
  }
  const peeks: { type: string; slot: Slot<AlertPeekResult> }[] = [];
  const peek = (subject: string, types: readonly string[]): void => {
    for (const type of types) {
      const slot = ctx.ops.add({ kind: 'alert.peek', key: ctx.alertKey(subject), field: type, at: f.at, windowMs: alertSpec(type).windowMs ?? MINUTE });
      peeks.push({ type, slot });
    }
  };
  if (f.actor !== undefined) peek(f.actorSubject, GUESSING_ALERTS.actor);
  if (f.ip !== undefined) peek(f.ipSubject, GUESSING_ALERTS.ip);
  if (peeks.length === 0) return undefined;
  const spraying =
    f.ip === undefined
      ? undefined
      : ctx.ops.add({ kind: 'alert.peek', key: ctx.alertKey(f.ipSubject), field: SPRAY, at: f.at, windowMs: alertSpec(SPRAY).windowMs ?? MINUTE });
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
    if (failures >= th(t, 'success_after_failures'))
      ctx.raise('auth.login_after_failures', f.actorSubject, {
        ip: f.ip ?? null,
        failures,
        threshold: th(t, 'success_after_failures'),
        window_minutes: th(t, 'success_window_minutes'),
      });
  };
}
