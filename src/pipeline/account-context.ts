import type { Plan } from '../limits/plans.js';
import type { Account, KeyKind } from '../storage/types.js';

/** Who sent the request, resolved once by authentication and read by every later stage. */
export interface AccountContext {
  readonly account: Account;
  readonly plan: Plan;
  readonly keyId: string;
  readonly keyKind: KeyKind;
}
