import type { Detector } from '../detector.js';
import { primarySubject } from '../facts.js';

/** auth.breached_password: the password sent (as SHA-1) is in a breached-password list. */
export const breachedPassword: Detector = {
  name: 'breached_password',
  detect(ctx) {
    const f = ctx.facts;
    if (f.event.enrichment.breachedPassword === true) ctx.raise('auth.breached_password', primarySubject(f), { via: f.type, login_succeeded: f.loginSuccess });
  },
};
