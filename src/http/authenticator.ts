import { planOf, type PlanTable } from '../limits/plans.js';
import type { AccountContext } from '../event/account.js';
import type { AccountStore } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import { hashKey, looksLikeKey, sameHash } from '../accounts/keys.js';

export type AuthResult =
  { readonly ok: true; readonly ctx: AccountContext; readonly allowedOrigins: readonly string[] } | { readonly ok: false; readonly message: string };

interface CacheEntry {
  readonly result: AuthResult;
  readonly expiresAt: number;
}

/** The bearer token of `Authorization: Bearer …`, if any. */
export function bearerToken(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const auth = headers.authorization;
  if (typeof auth !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  return match ? match[1] : undefined;
}

/**
 * The key of a request, from `Authorization: Bearer …` or `X-API-Key`; `conflict` when both
 * are sent with different keys (which one was meant is not guessed).
 */
export function presentedKey(headers: Readonly<Record<string, string | string[] | undefined>>): { readonly key?: string; readonly conflict?: true } {
  const bearer = bearerToken(headers);
  const header = headers['x-api-key'];
  const apiKey = typeof header === 'string' && header.trim().length > 0 ? header.trim() : undefined;
  if (bearer !== undefined && apiKey !== undefined && bearer !== apiKey) return { conflict: true };
  return { key: bearer ?? apiKey };
}

/**
 * The key of a request sent with `navigator.sendBeacon`, which cannot set headers: the
 * `api_key` query parameter, on the ingestion routes only. A secret key is refused there
 * (URLs end up in proxy and browser logs); only a publishable key, which is public by design,
 * may travel in a URL.
 */
export function beaconKey(query: unknown): { readonly key?: string; readonly refused?: string } {
  const key = (query as Record<string, unknown> | undefined)?.api_key;
  if (typeof key !== 'string' || key.length === 0) return {};
  if (!key.startsWith('vgl_pk_'))
    return { refused: 'Only a publishable key (vgl_pk_…) may be sent in the URL; send a secret key in the Authorization header.' };
  return { key };
}

/**
 * Resolves API keys to accounts. Lookups are cached briefly so a login burst does not
 * hit the database per request; revocation and plan changes made through this process
 * invalidate the cache at once, and other instances see them within `ttlMs`.
 * Verdicts are cached twice: by key hash (dashboard sessions know only the hash) and by the
 * presented key itself, so a request with a recently seen key skips its SHA-256. Only strings
 * of a key's shape are cached by key, so the cache holds at most `maxEntries` short strings.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly byKey = new Map<string, CacheEntry>();

  constructor(
    private readonly store: Pick<AccountStore, 'findKeyByHash'>,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
    private readonly ttlMs = 2_000,
    private readonly maxEntries = 50_000,
  ) {}

  async authenticate(key: string | undefined): Promise<AuthResult> {
    if (key === undefined) return { ok: false, message: 'Missing API key: send "Authorization: Bearer <API_KEY>" or "X-API-Key: <API_KEY>".' };
    if (!looksLikeKey(key)) return { ok: false, message: 'Invalid API key.' };
    const now = this.clock.now();
    const cached = this.byKey.get(key);
    if (cached && cached.expiresAt > now) return cached.result;
    const result = await this.authenticateHash(hashKey(key));
    if (this.byKey.size >= this.maxEntries) this.byKey.clear();
    this.byKey.set(key, { result, expiresAt: now + this.ttlMs });
    return result;
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
    this.byKey.clear();
  }

  private async lookup(hash: string): Promise<AuthResult> {
    const found = await this.store.findKeyByHash(hash);
    if (!found || !sameHash(found.hash, hash)) return { ok: false, message: 'Invalid API key.' };
    // A revoked key answers like an unknown one: the answer must not confirm that a key existed.
    if (found.key.revokedAt !== null) return { ok: false, message: 'Invalid API key.' };
    const plan = planOf(this.plans, found.account.plan);
    return {
      ok: true,
      ctx: {
        account: found.account,
        plan,
        keyId: found.key.id,
        keyKind: found.key.kind,
        principal: { kind: 'key', keyId: found.key.id, keyPrefix: found.key.prefix, scopes: found.key.scopes },
      },
      allowedOrigins: found.key.allowedOrigins,
    };
  }
}
