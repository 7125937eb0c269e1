import type { Classification } from '../event/classification.js';

/**
 * An authentication event for scoring and threat intel ("hosting ASN on an auth event"):
 * an `auth.*` or SSH login type, or an event inferred as a login success or failure.
 */
export function isAuthEvent(type: string, classification: Pick<Classification, 'inferred'>): boolean {
  if (type.startsWith('auth.') || type.startsWith('server.ssh.login.')) return true;
  for (const inferred of classification.inferred) if (inferred === 'auth.failure' || inferred === 'auth.success') return true;
  return false;
}
