import { MINUTE, th, type Detector, type Thresholds } from '../detector.js';
import { primarySubject, type EventFacts } from '../facts.js';
import { alertSpec } from '../specs.js';

const MFA_KEYS = ['mfa', 'mfa_enabled', 'mfaEnabled', '2fa', 'two_factor', 'totp', 'otp'];
const OFF_VALUES = new Set([false, 'disabled', 'off', 'removed', 'false', 'none']);

/** A generic event (inferred:mfa.event) that says MFA was switched off, e.g. metadata {mfa: "disabled"}. */
function inferredMfaOff(f: EventFacts): boolean {
  if (!f.has('mfa.event')) return false;
  const meta = f.event.metadata;
  return MFA_KEYS.some((k) => OFF_VALUES.has(meta[k] as never));
}

const FATIGUE = 'auth.mfa_fatigue';

/**
 * auth.mfa_disabled, auth.mfa_bypass_attempt, auth.mfa_fatigue (challenge failures per actor in a
 * window), auth.mfa_fatigue_accepted (a challenge passed while the actor's fatigue alert is open).
 */
export const mfaTampering: Detector = {
  name: 'mfa_tampering',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.type === 'auth.mfa.disabled' || inferredMfaOff(f)) ctx.raise('auth.mfa_disabled', primarySubject(f), { via: f.type });
    if (f.type === 'auth.mfa.bypass_attempted')
      ctx.raise('auth.mfa_bypass_attempt', primarySubject(f), { ip: f.ip ?? null, method: f.event.metadata.method ?? null });
    if (f.type === 'auth.mfa.challenge_passed' && f.actor !== undefined) {
      const subject = f.actorSubject;
      const slot = ctx.ops.add({
        kind: 'alert.peek',
        key: ctx.alertKey(subject),
        field: FATIGUE,
        at: f.at,
        windowMs: alertSpec(FATIGUE).windowMs ?? windowOf(t),
      });
      return (answers) => {
        const burst = answers.get(slot).alert;
        if (burst === null || burst.lastSeen > f.at) return;
        ctx.raise('auth.mfa_fatigue_accepted', subject, {
          ip: f.ip ?? null,
          fatigue_alert_id: burst.id,
          burst_since: new Date(burst.firstSeen).toISOString(),
          rejected_in_burst: burst.count,
        });
      };
    }
    if (f.type !== 'auth.mfa.challenge_failed' || f.actor === undefined) return;
    const slot = ctx.ops.add({ kind: 'window.add', key: ctx.key('w', f.actorSubject), field: 'mfa_fail', at: f.at, windowMs: windowOf(t) });
    return (answers) => {
      const failures = answers.get(slot).sum;
      const threshold = th(t, 'fatigue_failures');
      if (failures >= threshold) ctx.raise(FATIGUE, f.actorSubject, { challenge_failures: failures, threshold, window_minutes: th(t, 'window_minutes') });
    };
  },
};

const windowOf = (t: Thresholds): number => th(t, 'window_minutes') * MINUTE;
