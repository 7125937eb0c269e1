import type { PlanTable } from '../limits/plans.js';
import type { AccountContext } from '../pipeline/account-context.js';
import type { Store } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import { hashKey, looksLikeKey, sameHash } from '../accounts/keys.js';

export type AuthResult =
  { readonly ok: true; readonly ctx: AccountContext; readonly allowedOrigins: readonly string[] } | { readonly ok: false; readonly message: string };

interface CacheEntry {
  readonly result: AuthResult;
  readonly expiresAt: number;
}

/** Reads the key from `Authorization: Bearer …` or `X-API-Key`. */
export function presentedKey(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey.trim() : undefined;
}

/**
 * Resolves API keys to accounts. Lookups are cached briefly so a login burst does not
 * hit the database per request; revocation and plan changes made through this process
 * invalidate the cache at once, and other instances see them within `ttlMs`.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly store: Store,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
    private readonly ttlMs = 2_000,
    private readonly maxEntries = 50_000,
  ) {}

  async authenticate(key: string | undefined): Promise<AuthResult> {
    if (key === undefined) return { ok: false, message: 'Missing API key: send "Authorization: Bearer <API_KEY>" or "X-API-Key: <API_KEY>".' };
    if (!looksLikeKey(key)) return { ok: false, message: 'Invalid API key.' };
    return this.authenticateHash(hashKey(key));
  }

  /** The same check for a key known by its hash (a dashboard session holds no key, only which key opened it). */
  async authenticateHash(hash: string): Promise<AuthResult> {
    const now = this.clock.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.result;
    const result = await this.lookup(hash);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(hash, { result, expiresAt: now + this.ttlMs });
    return result;
  }

  /** Called after any change to keys or accounts made through this process. */
  invalidate(): void {
    this.cache.clear();
  }

  private async lookup(hash: string): Promise<AuthResult> {
    const found = await this.store.findKeyByHash(hash);
    if (!found || !sameHash(found.hash, hash)) return { ok: false, message: 'Invalid API key.' };
    if (found.key.revokedAt !== null) return { ok: false, message: 'This API key has been revoked.' };
    const plan = this.plans[found.account.plan] ?? this.plans.free;
    if (!plan) return { ok: false, message: 'The account has no valid plan.' };
    return {
      ok: true,
      ctx: { account: found.account, plan, keyId: found.key.id, keyKind: found.key.kind },
      allowedOrigins: found.key.allowedOrigins,
    };
  }
}
