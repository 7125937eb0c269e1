import { MINUTE, th, type Detector } from '../detector.js';
import { primarySubject, type EventFacts } from '../facts.js';

const MFA_KEYS = ['mfa', 'mfa_enabled', 'mfaEnabled', '2fa', 'two_factor', 'totp', 'otp'];
const OFF_VALUES = new Set([false, 'disabled', 'off', 'removed', 'false', 'none']);

/** A generic event (inferred:mfa.event) that says MFA was switched off, e.g. metadata {mfa: "disabled"}. */
function inferredMfaOff(f: EventFacts): boolean {
  if (!f.has('mfa.event')) return false;
  const meta = f.event.metadata;
  return MFA_KEYS.some((k) => OFF_VALUES.has(meta[k] as never));
}

/** auth.mfa_disabled, auth.mfa_bypass_attempt, auth.mfa_fatigue (challenge failures per actor in a window). */
export const mfaTampering: Detector = {
  name: 'mfa_tampering',
  detect(ctx, t) {
    const f = ctx.facts;
    if (f.type === 'auth.mfa.disabled' || inferredMfaOff(f)) ctx.raise('auth.mfa_disabled', primarySubject(f), { via: f.type });
    if (f.type === 'auth.mfa.bypass_attempted')
      ctx.raise('auth.mfa_bypass_attempt', primarySubject(f), { ip: f.ip ?? null, method: f.event.metadata.method ?? null });
    if (f.type !== 'auth.mfa.challenge_failed' || f.actor === undefined) return;
    const windowMs = th(t, 'window_minutes') * MINUTE;
    const slot = ctx.ops.add({ kind: 'window.add', key: ctx.key('w', `actor:${f.actor}`), field: 'mfa_fail', at: f.at, windowMs });
    return (answers) => {
      const failures = answers.get(slot).sum;
      const threshold = th(t, 'fatigue_failures');
      if (failures >= threshold)
        ctx.raise('auth.mfa_fatigue', `actor:${f.actor}`, { challenge_failures: failures, threshold, window_minutes: th(t, 'window_minutes') });
    };
  },
};
