import { planNamed, type PlanTable } from '../limits/plans.js';
import type { AccountStore } from '../storage/store.js';
import type { ApiKeyRecord } from '../storage/types.js';
import { KEY_SCOPES, type Account, type KeyKind, type KeyScope } from '../event/account.js';
import { changesBetween, SYSTEM, type AuditOrigin, type AuditTrail } from '../audit/trail.js';
import { generateKey } from './keys.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';

type Refusal = 'NOT_FOUND' | 'INVALID_REQUEST' | 'CONFLICT';

export type AccountsResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: Refusal; readonly message: string };

const fail = (code: Refusal, message: string) => ({ ok: false as const, code, message });

/** A key lists at most this many browser origins. */
export const MAX_ORIGINS = 50;
/** An account holds at most this many keys that are not revoked. */
export const MAX_KEYS_PER_ACCOUNT = 50;
/** The longest key name. */
export const MAX_KEY_NAME = 100;

/**
 * Who makes a change, for the audit trail: a member or key through /v1, the operator through the
 * admin API or the CLI. Without it nothing is recorded: Vigil's own fixtures in tests.
 */
export type ChangeOrigin = Omit<AuditOrigin, 'accountId'>;

/** Why these scopes cannot be given to a key of this kind, or undefined when they can. */
export function scopesProblem(kind: KeyKind, scopes: readonly string[]): string | undefined {
  const unknown = scopes.filter((s) => !(KEY_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0)
    return `Unknown scope${unknown.length === 1 ? '' : 's'} ${unknown.map((s) => JSON.stringify(s)).join(', ')}; the scopes are ${KEY_SCOPES.join(', ')}.`;
  if (scopes.length === 0) return `A key needs at least one scope: ${KEY_SCOPES.join(', ')}.`;
  if (kind === 'publishable' && scopes.some((s) => s !== 'ingest'))
    return 'A publishable key only ever holds the "ingest" scope: it is public (browsers, apps); use a secret key to read or manage.';
  return undefined;
}

/** Why a key name is refused, or undefined when it is fine (control characters would garble the lists that show it). */
export function keyNameProblem(name: string): string | undefined {
  if (name.trim().length === 0) return 'A key name cannot be blank.';
  if (name.length > MAX_KEY_NAME) return `A key name has at most ${MAX_KEY_NAME} characters.`;
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'A key name cannot hold control characters (line breaks, tabs).';
  return undefined;
}

/** Scopes in their canonical order, each once. */
const canonicalScopes = (scopes: readonly string[]): KeyScope[] => KEY_SCOPES.filter((s) => scopes.includes(s));

/** The non-secret facts of a key that its audit entries carry. */
const keyFacts = (k: ApiKeyRecord) => ({ prefix: k.prefix, kind: k.kind, scopes: k.scopes, name: k.name });

export interface NewKeyOptions {
  /** Omitted: the kind's full set (a publishable key: ingest). */
  readonly scopes?: readonly string[];
  readonly name?: string;
  readonly by?: ChangeOrigin;
}

export interface KeyPatch {
  readonly allowedOrigins?: readonly string[];
  readonly scopes?: readonly string[];
  readonly name?: string;
}

/** Why this change cannot be made to any key (malformed origins, unknown scopes, a bad name), or undefined. */
function patchProblem(patch: KeyPatch): string | undefined {
  return (
    (patch.allowedOrigins === undefined ? undefined : originsProblem(patch.allowedOrigins)) ??
    (patch.scopes === undefined ? undefined : scopesProblem('secret', patch.scopes)) ??
    (patch.name === undefined ? undefined : keyNameProblem(patch.name))
  );
}

/** Why this change cannot be made to a key of this kind, or undefined when it can. */
function kindProblem(key: ApiKeyRecord, patch: KeyPatch): string | undefined {
  if (patch.allowedOrigins !== undefined && key.kind !== 'publishable') return `Key ${key.id} is a secret key; allowed origins apply to publishable keys only.`;
  return patch.scopes === undefined ? undefined : scopesProblem(key.kind, patch.scopes);
}

export interface KeyChangeOptions {
  /** The account the key must belong to (/v1 callers); another account's key is not found. */
  readonly accountId?: string;
  readonly by?: ChangeOrigin;
}

export interface AccountsHooks {
  /** Records the changes made with an origin. */
  readonly audit?: AuditTrail;
  /**
   * Called after a change to an account's plan or keys, before it is answered: the service
   * forgets what it cached of the account's keys, on every instance.
   */
  readonly changed?: (accountId: string) => Promise<void>;
}

/**
 * Why an allowed-origins list is refused, or undefined when it is valid. An origin is `*` or
 * exactly what a browser sends in `Origin` (scheme, host, port; lower case, no path): the check
 * against a request is a plain string comparison, so `https://App.example/` would never match.
 */
export function originsProblem(origins: readonly string[]): string | undefined {
  if (origins.length > MAX_ORIGINS) return `A key allows at most ${MAX_ORIGINS} origins.`;
  for (const origin of origins) {
    if (origin === '*') continue;
    let canonical: string | undefined;
    try {
      const url = new URL(origin);
      canonical = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
    } catch {
      canonical = undefined;
    }
    if (canonical === origin) continue;
    const hint = canonical ? ` Did you mean "${canonical}"?` : '';
    return `"${origin}" is not an origin: write scheme://host[:port] as a browser sends it (e.g. https://app.example.com), or * for any.${hint}`;
  }
  return undefined;
}

/** Accounts and keys, shared by the /v1 keys routes, the admin API, the CLI and first start. */
export class Accounts {
  constructor(
    private readonly store: AccountStore,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
    private readonly hooks: AccountsHooks = {},
  ) {}

  private unknownPlan(plan: string) {
    return fail('INVALID_REQUEST', `Unknown plan "${plan}"; plans: ${Object.keys(this.plans).join(', ')}.`);
  }

  private async record(by: ChangeOrigin | undefined, accountId: string, change: Parameters<AuditTrail['record']>[1]): Promise<void> {
    if (by !== undefined && this.hooks.audit !== undefined) await this.hooks.audit.record({ ...by, accountId }, change);
  }

  async create(name: string, plan: string, by?: ChangeOrigin): Promise<AccountsResult<Account>> {
    if (!planNamed(this.plans, plan)) return this.unknownPlan(plan);
    const account = await this.store.createAccount({ id: newId('acc'), name, plan, createdAt: this.clock.now() });
    await this.recordCreated(by, account);
    return { ok: true, value: account };
  }

  private recordCreated(by: ChangeOrigin | undefined, account: Account): Promise<void> {
    return this.record(by, account.id, {
      action: 'account.created',
      target: { kind: 'account', id: account.id },
      details: { name: account.name, plan: account.plan },
    });
  }

  async changePlan(id: string, plan: string, by?: ChangeOrigin): Promise<AccountsResult<Account>> {
    if (!planNamed(this.plans, plan)) return this.unknownPlan(plan);
    const before = await this.store.getAccount(id);
    if (!before) return fail('NOT_FOUND', `No account ${id}.`);
    const account = await this.store.updateAccount(id, { plan });
    if (!account) return fail('NOT_FOUND', `No account ${id}.`);
    await this.hooks.changed?.(id);
    const changes = changesBetween({ plan: before.plan }, { plan: account.plan });
    if (Object.keys(changes).length > 0) await this.record(by, id, { action: 'account.plan_changed', target: { kind: 'account', id }, changes });
    return { ok: true, value: account };
  }

  async listKeys(accountId: string): Promise<readonly ApiKeyRecord[]> {
    return this.store.listKeys(accountId);
  }

  async createKey(
    accountId: string,
    kind: KeyKind,
    allowedOrigins: readonly string[] = [],
    options: NewKeyOptions = {},
  ): Promise<AccountsResult<{ record: ApiKeyRecord; key: string }>> {
    const problem =
      originsProblem(allowedOrigins) ??
      (options.scopes === undefined ? undefined : scopesProblem(kind, options.scopes)) ??
      (options.name === undefined ? undefined : keyNameProblem(options.name));
    if (problem) return fail('INVALID_REQUEST', problem);
    if (!(await this.store.getAccount(accountId))) return fail('NOT_FOUND', `No account ${accountId}.`);
    const live = (await this.store.listKeys(accountId)).filter((k) => k.revokedAt === null).length;
    if (live >= MAX_KEYS_PER_ACCOUNT)
      return fail('CONFLICT', `An account holds at most ${MAX_KEYS_PER_ACCOUNT} keys that are not revoked; revoke one it no longer uses first.`);
    const generated = generateKey(kind);
    const record = await this.store.createKey({
      id: newId('key'),
      accountId,
      kind,
      hash: generated.hash,
      prefix: generated.prefix,
      allowedOrigins,
      createdAt: this.clock.now(),
      ...(options.scopes === undefined ? {} : { scopes: canonicalScopes(options.scopes) }),
      name: options.name?.trim() ?? null,
    });
    await this.record(options.by, accountId, { action: 'key.created', target: { kind: 'key', id: record.id }, details: keyFacts(record) });
    return { ok: true, value: { record, key: generated.key } };
  }

  /** The key, when it exists (and belongs to `accountId`, when given). */
  private async key(id: string, accountId: string | undefined): Promise<AccountsResult<ApiKeyRecord>> {
    const key = await this.store.getKey(id);
    if (!key || (accountId !== undefined && key.accountId !== accountId)) return fail('NOT_FOUND', `No key ${id}.`);
    return { ok: true, value: key };
  }

  /** Revokes a key: it is refused from the answer on. Revoking a revoked key changes nothing. */
  async revokeKey(id: string, options: KeyChangeOptions = {}): Promise<AccountsResult<ApiKeyRecord>> {
    const found = await this.key(id, options.accountId);
    if (!found.ok) return found;
    if (found.value.revokedAt !== null) return found;
    await this.store.revokeKey(id, this.clock.now());
    await this.hooks.changed?.(found.value.accountId);
    const revoked = await this.key(id, options.accountId);
    await this.record(options.by, found.value.accountId, { action: 'key.revoked', target: { kind: 'key', id }, details: keyFacts(found.value) });
    return revoked;
  }

  /** The key, when it exists (and belongs to `options.accountId`, when given). */
  async getKey(id: string, options: KeyChangeOptions = {}): Promise<AccountsResult<ApiKeyRecord>> {
    return this.key(id, options.accountId);
  }

  /**
   * Changes a key's browser origins (publishable keys), scopes or name: all of them or, when one
   * is refused, none. Each kind of change is one audit entry; it applies from the answer on.
   * A revoked key cannot change.
   */
  async updateKey(id: string, patch: KeyPatch, options: KeyChangeOptions = {}): Promise<AccountsResult<ApiKeyRecord>> {
    const malformed = patchProblem(patch);
    if (malformed) return fail('INVALID_REQUEST', malformed);
    const found = await this.key(id, options.accountId);
    if (!found.ok) return found;
    const before = found.value;
    const problem = kindProblem(before, patch);
    if (problem) return fail('INVALID_REQUEST', problem);
    if (before.revokedAt !== null) return fail('CONFLICT', `Key ${id} is revoked; create a new key instead.`);
    let after: ApiKeyRecord | undefined = before;
    if (patch.allowedOrigins !== undefined) after = await this.store.setKeyOrigins(id, [...new Set(patch.allowedOrigins)]);
    if (after && (patch.scopes !== undefined || patch.name !== undefined))
      after = await this.store.updateKey(id, {
        ...(patch.scopes === undefined ? {} : { scopes: canonicalScopes(patch.scopes) }),
        ...(patch.name === undefined ? {} : { name: patch.name.trim() }),
      });
    if (!after) return fail('NOT_FOUND', `No key ${id}.`);
    const origins = changesBetween({ allowed_origins: before.allowedOrigins }, { allowed_origins: after.allowedOrigins });
    const named = changesBetween({ scopes: before.scopes, name: before.name }, { scopes: after.scopes, name: after.name });
    if (Object.keys(origins).length > 0 || 'scopes' in named) await this.hooks.changed?.(before.accountId);
    const target = { kind: 'key', id };
    const details = { prefix: after.prefix, kind: after.kind };
    if (Object.keys(origins).length > 0) await this.record(options.by, before.accountId, { action: 'key.origins_changed', target, changes: origins, details });
    if (Object.keys(named).length > 0)
      await this.record(options.by, before.accountId, { action: 'scopes' in named ? 'key.scopes_changed' : 'key.renamed', target, changes: named, details });
    return { ok: true, value: after };
  }

  /** Replaces the browser origins a publishable key is accepted from (secret keys are never used from browsers). */
  async setKeyOrigins(id: string, allowedOrigins: readonly string[], options: KeyChangeOptions = {}): Promise<AccountsResult<ApiKeyRecord>> {
    return this.updateKey(id, { allowedOrigins }, options);
  }

  /**
   * First start on an empty database: one account with a secret and a publishable key, recorded
   * as Vigil's doing. Of several instances starting together on one database, exactly one
   * creates it; the others answer undefined as on any later start.
   */
  async bootstrap(plan: string): Promise<{ account: Account; secret: string; publishable: string; publishableId: string } | undefined> {
    if ((await this.store.countAccounts()) > 0) return undefined;
    if (!planNamed(this.plans, plan)) throw new Error(this.unknownPlan(plan).message);
    const by: ChangeOrigin = { actor: SYSTEM, ip: null, userAgent: null };
    const account = await this.store.createFirstAccount({ id: newId('acc'), name: 'default', plan, createdAt: this.clock.now() });
    if (account === undefined) return undefined;
    await this.recordCreated(by, account);
    const secret = await this.createKey(account.id, 'secret', [], { name: 'first start', by });
    const publishable = await this.createKey(account.id, 'publishable', [], { name: 'first start', by });
    if (!secret.ok || !publishable.ok) throw new Error('could not create the first keys');
    return { account, secret: secret.value.key, publishable: publishable.value.key, publishableId: publishable.value.record.id };
  }
}
