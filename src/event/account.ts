/** Accounts, their plans and keys: who sent an event, resolved once by authentication. */

export type KeyKind = 'secret' | 'publishable';

export interface Account {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly createdAt: number;
  /** Account settings (thresholds, allowlists); validated by the settings module. */
  readonly settings: Readonly<Record<string, unknown>>;
}

export interface Plan {
  readonly name: string;
  /** Events per minute per key (sliding window). */
  readonly rpm: number;
  /** Requests per second per key (sliding window; a batch is one request). */
  readonly eps: number;
  /** Largest batch; 0 means the batch endpoint is unavailable (403). */
  readonly batchMax: number;
  readonly monthlyCap: number;
  /** What happens past the monthly cap. */
  readonly overage: 'drop' | 'bill';
  readonly priceUsdMonth: number;
  readonly overageUsdPer1000: number | null;
  /** What the plan includes beyond its limits (threat models, retention, …). */
  readonly capabilities: PlanCapabilities;
}

/**
 * What a plan includes beyond its limits, asked of the plan and never read from its name. Each
 * capability is declared once, in limits/plans.ts (its plans-file field, schema, least value and
 * the built-in plans' values), which adds its member to this interface.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- limits/plans.ts declares the members
export interface PlanCapabilities {}

/** Who sent the request, resolved once by authentication and read by every later stage. */
export interface AccountContext {
  readonly account: Account;
  readonly plan: Plan;
  readonly keyId: string;
  readonly keyKind: KeyKind;
}
