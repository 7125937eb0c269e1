import { DAY_MS } from '../../util/duration.js';
import { defineDetector } from '../detector.js';
import { primarySubject } from '../facts.js';

/** auth.breached_password: the password sent (as SHA-1) is in a breached-password list. */
export const breachedPassword = defineDetector({
  name: 'breached_password',
  families: ['credential', 'authentication'],
  description: 'A password found in a breached-password list was used.',
  alerts: {
    'auth.breached_password': {
      severity: 'medium',
      mitre: ['T1110.004', 'T1078'],
      windowMs: DAY_MS,
      description:
        'The password used appears in a list of breached passwords. Ask the user to change it; if the login succeeded it may not have been the user.',
    },
  },
  detect(ctx) {
    const f = ctx.facts;
    if (f.event.enrichment.breachedPassword === true) ctx.raise('auth.breached_password', primarySubject(f), { via: f.type, login_succeeded: f.loginSuccess });
  },
});
