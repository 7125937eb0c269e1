import { planOf, type PlanTable } from '../limits/plans.js';
import type { AccountContext, Stamps } from '../event/account.js';
import type { AccountStore } from '../storage/store.js';
import type { Clock } from '../util/clock.js';
import { hashKey, looksLikeKey, sameHash } from '../accounts/keys.js';
import type { AccountStamps } from '../detection/state/stamps.js';

export type AuthResult =
  { readonly ok: true; readonly ctx: AccountContext; readonly allowedOrigins: readonly string[] } | { readonly ok: false; readonly message: string };

interface CacheEntry {
  readonly result: AuthResult;
  /** The key's account: a key never changes account, so an expired entry still tells whose stamp to read. */
  readonly accountId: string | undefined;
  /** The account's key stamp the verdict was read under; undefined when the account was not known before the read. */
  readonly stamp: string | null | undefined;
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
 * Resolves API keys to accounts. Verdicts are cached briefly so a login burst does not hit the
 * database per request. Every change to an account's keys or plan writes a new stamp for the
 * account (`changed`, shared through the state store when scaled out), and a cached verdict is
 * used only while its account's stamp is the one it was read under: a revoked key or a narrowed
 * scope is refused on every instance from the moment the change is answered. The stamp is read
 * before the database, so a verdict read while a change commits is never kept under the new
 * stamp; a key seen for the first time has no account yet, and its verdict is read once more
 * under a stamp on its next use. Changes the store gets another way (the CLI) are seen within `ttlMs`.
 * The key stamp is read together with the account's other stamps, in one round trip, and a verdict
 * answers them all in its context: the request's later stages use them instead of reading their own.
 * Dashboard sessions know only the key hash: verdicts are cached by hash, and the hash of each
 * recently presented key is kept (only strings of a key's shape, at most `maxEntries`), so a
 * request with a recently seen key skips its SHA-256.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly hashes = new Map<string, string>();
  private readonly stamps: AccountStamps | undefined;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly store: Pick<AccountStore, 'findKeyByHash'>,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
    options: { readonly stamps?: AccountStamps; readonly ttlMs?: number; readonly maxEntries?: number } = {},
  ) {
    this.stamps = options.stamps;
    this.ttlMs = options.ttlMs ?? 2_000;
    this.maxEntries = options.maxEntries ?? 50_000;
  }

  async authenticate(key: string | undefined): Promise<AuthResult> {
    if (key === undefined) return { ok: false, message: 'Missing API key: send "Authorization: Bearer <API_KEY>" or "X-API-Key: <API_KEY>".' };
    if (!looksLikeKey(key)) return { ok: false, message: 'Invalid API key.' };
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      hash = hashKey(key);
      if (this.hashes.size >= this.maxEntries) this.hashes.clear();
      this.hashes.set(key, hash);
    }
    return this.authenticateHash(hash);
  }

  /** The same check for a key known by its hash (a dashboard session holds no key, only which key opened it). */
  async authenticateHash(hash: string): Promise<AuthResult> {
    const now = this.clock.now();
    const entry = this.cache.get(hash);
    if (entry?.accountId === undefined) {
      if (entry !== undefined && entry.expiresAt > now) return entry.result;
      const result = await this.load(hash, this.stamps ? undefined : null, now);
      // Read after the database, these stamps serve this request's later stages, never the cached verdict.
      if (!result.ok || this.stamps === undefined) return result;
      const read = this.stamps.read(result.ctx.account.id);
      return withStamps(result, read instanceof Promise ? await read : read);
    }
    if (this.stamps === undefined) return entry.expiresAt > now && entry.stamp === null ? entry.result : this.load(hash, null, now);
    const read = this.stamps.read(entry.accountId);
    const stamps = read instanceof Promise ? await read : read;
    // A key never changes account, so the stamps read for the cached one are the verdict's account's.
    if (entry.expiresAt > now && entry.stamp === stamps.keys) return withStamps(entry.result, stamps);
    return withStamps(await this.load(hash, stamps.keys, now), stamps);
  }

  /**
   * Called after a change to an account's keys or plan, before it is answered: this process
   * forgets its verdicts at once, and the account's new stamp makes every other instance read
   * the account's keys again.
   */
  async changed(accountId: string): Promise<void> {
    this.invalidate();
    await this.stamps?.bump(accountId, 'keys');
  }

  /** Forgets every cached verdict of this process (settings changes: the account is part of a verdict). */
  invalidate(): void {
    this.cache.clear();
  }

  private async load(hash: string, stamp: string | null | undefined, now: number): Promise<AuthResult> {
    const found = await this.store.findKeyByHash(hash);
    const result = this.verdict(hash, found);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(hash, { result, accountId: found?.account.id, stamp, expiresAt: now + this.ttlMs });
    return result;
  }

  private verdict(hash: string, found: Awaited<ReturnType<AccountStore['findKeyByHash']>>): AuthResult {
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

/** The verdict with the stamps this request read; the cached verdict itself is shared by every request and keeps none. */
function withStamps(result: AuthResult, stamps: Stamps): AuthResult {
  return result.ok ? { ok: true, ctx: Object.assign({}, result.ctx, { stamps }), allowedOrigins: result.allowedOrigins } : result;
}
