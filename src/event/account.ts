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

/** A person's role in an account, least to most: each role may do what the ones before it may. */
export type Role = 'viewer' | 'analyst' | 'admin' | 'owner';
export const ROLES: readonly Role[] = ['viewer', 'analyst', 'admin', 'owner'];

/**
 * What a key may do: send events, read, change the account's configuration, erase and export a
 * data subject's personal data (`subjects`).
 */
export type KeyScope = 'ingest' | 'read' | 'manage' | 'subjects';
export const KEY_SCOPES: readonly KeyScope[] = ['ingest', 'read', 'manage', 'subjects'];

/** A secret key's scopes when none was chosen: `subjects` is only ever given by name. */
const DEFAULT_SECRET_SCOPES: readonly KeyScope[] = ['ingest', 'read', 'manage'];

/**
 * What a key may do when none was chosen: everything its kind allows but erasing and exporting
 * a person's data. Keys made before scopes existed are read this way, so they keep working as
 * they did; a publishable key only ever sends.
 */
export const fullScopes = (kind: KeyKind): readonly KeyScope[] => (kind === 'publishable' ? ['ingest'] : DEFAULT_SECRET_SCOPES);

/** Who made a request: an API key with its scopes, or a person signed in to the dashboard with their role. */
export type Principal =
  | { readonly kind: 'key'; readonly keyId: string; readonly keyPrefix: string; readonly scopes: readonly KeyScope[] }
  | { readonly kind: 'member'; readonly userId: string; readonly email: string; readonly role: Role; readonly sessionId: string };

/**
 * An account's stamps as one request read them (src/detection/state/stamps.ts), one per kind of
 * record an instance caches: its API keys (and plan), its suppression list, its threat models. A
 * stamp nobody wrote yet (or one evicted) reads as null.
 */
export interface Stamps {
  readonly keys: string | null;
  readonly suppressions: string | null;
  readonly threatModels: string | null;
}

export type StampName = keyof Stamps;

/** Who sent the request, resolved once by authentication and read by every later stage. */
export interface AccountContext {
  readonly account: Account;
  readonly plan: Plan;
  /** The key the per-key limits count against; for a person's session, `member:<user id>`. */
  readonly keyId: string;
  readonly keyKind: KeyKind;
  readonly principal: Principal;
  /**
   * The account's stamps as authentication read them for this request: the suppression list and
   * the threat models use them instead of reading their own. Absent when no stamps were read
   * (a dashboard session, a caller outside HTTP): each then reads them itself.
   */
  readonly stamps?: Stamps;
}
