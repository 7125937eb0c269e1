import type { Detector } from '../detector.js';

const ACCOUNT_EMAIL_TYPES = new Set(['account.created', 'account.email.changed', 'account.invited', 'admin.user.created']);

/** account.disposable_email: an account created with, or changed to, a disposable address. */
export const disposableEmail: Detector = {
  name: 'disposable_email',
  detect(ctx) {
    const f = ctx.facts;
    const email = f.event.enrichment.email;
    if (email === undefined || !email.disposable) return;
    if (!ACCOUNT_EMAIL_TYPES.has(f.type) && !f.has('account.create')) return;
    ctx.raise('account.disposable_email', f.actor !== undefined ? f.actorSubject : `email:${email.normalized}`, { domain: email.domain });
  },
};
