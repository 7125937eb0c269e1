/**
 * Tenant scoping of shared state. Every record that detection, limits and quotas keep for an
 * account (windows, seen-sets, alert deduplication, kill-chain progress, quota counters) lives
 * under a key that starts with the account's scope. A scope is made only here, from a resolved
 * account id (or, for the in-process store, a short alias of one), and every key a store
 * writes is checked here before it is used: a key built from anything else — an unresolved
 * promise, `undefined`, another object — is a programming error that throws instead of
 * silently sharing one record between accounts.
 */

declare const scopeBrand: unique symbol;
/** An account's scope in state keys; only `accountScope` and `localScopeAlias` make one. */
export type AccountScope = string & { readonly [scopeBrand]: true };

/** Account ids as `newId('acc')` makes them: `acc_` and a ULID (tests and imports may use shorter ones). */
const ACCOUNT_ID = /^acc_[0-9A-Za-z]{1,64}$/;
/** In-process aliases: `#` and a base-36 counter. */
const LOCAL_ALIAS = /^#[0-9a-z]{1,12}$/;
/** A scoped key: a scope, `|`, then at least one non-empty part. */
const SCOPED_KEY = /^(?:acc_[0-9A-Za-z]{1,64}|#[0-9a-z]{1,12})\|[^|]/;

export class TenantScopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TenantScopeError';
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value === null) return 'null';
  if (typeof value === 'object') return `an object (${Object.prototype.toString.call(value)})`;
  return `${typeof value} ${String(value)}`;
}

/** The scope of a resolved account id; anything else throws. */
export function accountScope(accountId: unknown): AccountScope {
  if (typeof accountId !== 'string' || !ACCOUNT_ID.test(accountId)) throw new TenantScopeError(`not a resolved account id: ${describe(accountId)}`);
  return accountId as AccountScope;
}

/** A short in-process alias for an account (the n-th account this process has seen). */
export function localScopeAlias(n: number): AccountScope {
  const alias = `#${n.toString(36)}`;
  if (!LOCAL_ALIAS.test(alias)) throw new TenantScopeError(`not a local scope alias: ${describe(alias)}`);
  return alias as AccountScope;
}

const HASH = 35;
const BAR = 124;
const isAliasChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 97 && c <= 122);

/**
 * SCOPED_KEY.test(key), with the in-process alias form (`#` + 1-12 of [0-9a-z], `|`, a part not
 * starting with `|`) checked by character codes: the in-process store checks every key of every
 * state op, and this runs several times per event.
 */
export function isScopedKey(key: string): boolean {
  if (key.charCodeAt(0) !== HASH) return SCOPED_KEY.test(key);
  let i = 1;
  while (i < key.length && i <= 13 && isAliasChar(key.charCodeAt(i))) i++;
  return i >= 2 && i <= 13 && key.charCodeAt(i) === BAR && i + 1 < key.length && key.charCodeAt(i + 1) !== BAR;
}

/** Throws unless `key` starts with an account scope; stores call this for every key they write. */
export function assertScopedKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || !isScopedKey(key)) throw new TenantScopeError(`state key without an account scope: ${describe(key)}`);
}

/** `<scope>|<part>|<part>…`, each part a non-empty string. */
export function scopedKey(scope: AccountScope, ...parts: readonly string[]): string {
  for (const part of parts) {
    if (typeof part !== 'string' || part.length === 0) throw new TenantScopeError(`empty or non-string key part: ${describe(part)}`);
  }
  const key = `${scope}|${parts.join('|')}`;
  assertScopedKey(key);
  return key;
}
