import { MINUTE_MS, HOUR_MS } from '../../util/duration.js';
import { defineDetector, type Slot } from '../detector.js';
import type { AlertPeekResult, DistinctResult, WindowResult } from '../state/state-store.js';

export const SENSITIVE_CHANGE_TYPES: ReadonlySet<string> = new Set([
  'account.email.changed',
  'account.phone.changed',
  'auth.password.changed',
  'auth.password.reset_completed',
  'auth.mfa.disabled',
  'auth.mfa.enabled',
]);
const NEW_LOGIN_ALERTS = ['auth.new_country', 'auth.new_device'] as const;

/**
 * account.change_after_new_login: a sensitive change (email, phone, password, MFA) within
 * change_window_minutes after a login that raised auth.new_country or auth.new_device;
 * account.password_reset_abuse: reset requests per actor, or distinct actors per IP, in a window.
 */
export const accountTakeoverSignals = defineDetector({
  name: 'account_takeover_signals',
  families: ['account', 'credential', 'authentication'],
  description: 'Sensitive account changes soon after a login from a new country or device, and password-reset floods.',
  thresholds: {
    change_window_minutes: {
      default: 60,
      min: 1,
      max: 10_080,
      description: 'How long after a new-country or new-device login a sensitive change is suspicious.',
    },
    resets_per_actor: { default: 5, min: 2, max: 10_000, description: 'Password resets for one actor within the reset window.' },
    reset_actors_per_ip: { default: 20, min: 2, max: 100_000, description: 'Distinct actors whose password is reset from one IP within the reset window.' },
    reset_window_minutes: { default: 60, min: 1, max: 1440, description: 'Reset window length in minutes.' },
  },
  alerts: {
    'account.change_after_new_login': {
      severity: 'high',
      mitre: ['T1098', 'T1078'],
      windowMs: HOUR_MS,
      description:
        'Email, phone, password or MFA settings were changed shortly after a login from a new country or device: a classic account takeover step to lock the owner out.',
    },
    'account.password_reset_abuse': {
      severity: 'medium',
      mitre: ['T1098', 'T1110'],
      windowMs: HOUR_MS,
      description:
        'Too many password resets for one user, or for many users from one IP address, in an hour: reset flooding, account enumeration or takeover through the reset flow.',
    },
  },
  detect(ctx, t) {
    const f = ctx.facts;
    const sensitive = SENSITIVE_CHANGE_TYPES.has(f.type) && f.actor !== undefined;
    const reset = f.type === 'auth.password.reset_requested' || (f.has('password.event') && (f.event.request?.path ?? '').toLowerCase().includes('reset'));
    if (!sensitive && !reset) return;
    const peeks: Slot<AlertPeekResult>[] = [];
    if (sensitive) {
      const windowMs = t.change_window_minutes * MINUTE_MS;
      for (const type of NEW_LOGIN_ALERTS) peeks.push(ctx.ops.add({ kind: 'alert.peek', key: ctx.alertKey(f.actorSubject), field: type, at: f.at, windowMs }));
    }
    const who = f.actor ?? f.event.enrichment.email?.normalized ?? f.event.email;
    let perActor: Slot<WindowResult> | undefined;
    let perIp: Slot<DistinctResult> | undefined;
    if (reset) {
      const windowMs = t.reset_window_minutes * MINUTE_MS;
      if (who !== undefined) perActor = ctx.ops.add({ kind: 'window.add', key: ctx.key('w', `actor:${who}`), field: 'resets', at: f.at, windowMs });
      if (f.ip !== undefined && who !== undefined)
        perIp = ctx.ops.add({ kind: 'distinct.add', key: ctx.key('w', f.ipSubject), field: 'resets', at: f.at, windowMs, member: who });
    }
    return (answers) => {
      for (let i = 0; i < peeks.length; i++) {
        const alert = answers.get(peeks[i] as Slot<AlertPeekResult>).alert;
        if (alert === null || alert.lastSeen > f.at) continue;
        ctx.raise('account.change_after_new_login', f.actorSubject, {
          change: f.type,
          after: NEW_LOGIN_ALERTS[i],
          login_alert: alert.id,
          minutes_after_login: Math.round((f.at - alert.lastSeen) / MINUTE_MS),
        });
        break;
      }
      const minutes = t.reset_window_minutes;
      if (perActor !== undefined) {
        const resets = answers.get(perActor).sum;
        if (resets >= t.resets_per_actor)
          ctx.raise('account.password_reset_abuse', `actor:${who}`, { resets, threshold: t.resets_per_actor, window_minutes: minutes });
      }
      if (perIp !== undefined) {
        const actors = answers.get(perIp).distinct;
        if (actors >= t.reset_actors_per_ip)
          ctx.raise('account.password_reset_abuse', f.ipSubject, {
            distinct_actors: actors,
            threshold: t.reset_actors_per_ip,
            window_minutes: minutes,
          });
      }
    };
  },
});
