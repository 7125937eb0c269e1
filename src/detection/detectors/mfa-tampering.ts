import { MINUTE_MS, HOUR_MS } from '../../util/duration.js';
import { defineDetector, type ThresholdValues } from '../detector.js';
import { primarySubject, type EventFacts } from '../facts.js';

const MFA_KEYS = ['mfa', 'mfa_enabled', 'mfaEnabled', '2fa', 'two_factor', 'totp', 'otp'];
const OFF_VALUES = new Set([false, 'disabled', 'off', 'removed', 'false', 'none']);

/** A generic event (inferred:mfa.event) that says MFA was switched off, e.g. metadata {mfa: "disabled"}. */
function inferredMfaOff(f: EventFacts): boolean {
  if (!f.has('mfa.event')) return false;
  const meta = f.event.metadata;
  return MFA_KEYS.some((k) => OFF_VALUES.has(meta[k] as never));
}

const FATIGUE = 'auth.mfa_fatigue';
const FATIGUE_WINDOW_MS = 10 * MINUTE_MS;

/**
 * auth.mfa_disabled, auth.mfa_bypass_attempt, auth.mfa_fatigue (challenge failures per actor in a
 * window), auth.mfa_fatigue_accepted (a challenge passed while the actor's fatigue alert is open).
 */
export const mfaTampering = defineDetector({
  name: 'mfa_tampering',
  families: ['authentication', 'credential', 'account'],
  description: 'MFA disabled, bypass attempts, push/challenge fatigue and an approval during a fatigue burst.',
  thresholds: {
    fatigue_failures: { default: 5, min: 2, max: 10_000, description: 'MFA challenge failures of one actor within the window that raise auth.mfa_fatigue.' },
    window_minutes: { default: 10, min: 1, max: 1440, description: 'Sliding window length in minutes.' },
  },
  alerts: {
    'auth.mfa_disabled': {
      severity: 'high',
      mitre: ['T1556.006'],
      windowMs: HOUR_MS,
      description: 'Multi-factor authentication was turned off for an account. Legitimate users rarely do this; attackers do it to keep access.',
    },
    'auth.mfa_bypass_attempt': {
      severity: 'high',
      mitre: ['T1556.006', 'T1111'],
      windowMs: HOUR_MS,
      description: 'Someone tried to get past multi-factor authentication without completing it (skipped step, replayed or forged challenge).',
    },
    'auth.mfa_fatigue': {
      severity: 'high',
      mitre: ['T1621'],
      windowMs: FATIGUE_WINDOW_MS,
      description:
        'Many MFA challenges for one user failed or were rejected in a short window: an attacker with the password is flooding the user with prompts hoping one gets approved.',
    },
    'auth.mfa_fatigue_accepted': {
      severity: 'critical',
      mitre: ['T1621', 'T1078'],
      windowMs: HOUR_MS,
      description:
        'An MFA challenge was approved while a fatigue burst on the same user was open: the user probably gave in to the flood of prompts, and the attacker holds a working session.',
    },
  },
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
        windowMs: FATIGUE_WINDOW_MS,
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
      const threshold = t.fatigue_failures;
      if (failures >= threshold) ctx.raise(FATIGUE, f.actorSubject, { challenge_failures: failures, threshold, window_minutes: t.window_minutes });
    };
  },
});

const windowOf = (t: ThresholdValues<'window_minutes'>): number => t.window_minutes * MINUTE_MS;
