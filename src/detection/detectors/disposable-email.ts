import { DAY_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';

const ACCOUNT_EMAIL_TYPES = new Set(['account.created', 'account.email.changed', 'account.invited', 'admin.user.created']);

/** account.disposable_email: an account created with, or changed to, a disposable address. */
export const disposableEmail = defineDetector({
  name: 'disposable_email',
  families: ['account'],
  description: 'Accounts created or re-pointed to a disposable email domain.',
  alerts: {
    'account.disposable_email': {
      severity: 'low',
      mitre: ['T1585.002'],
      windowMs: DAY_MS,
      description: 'An account was created with, or changed to, an address at a disposable email provider: common for fake sign-ups and abuse.',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    const email = f.event.enrichment.email;
    if (email === undefined || !email.disposable) return;
    if (!ACCOUNT_EMAIL_TYPES.has(f.type) && !f.has('account.create')) return;
    ctx.raise('account.disposable_email', f.actor !== undefined ? f.actorSubject : `email:${email.normalized}`, { domain: email.domain });
  },
});
