import { planNamed, type PlanTable } from '../limits/plans.js';
import type { AccountStore } from '../storage/store.js';
import type { ApiKeyRecord } from '../storage/types.js';
import type { Account, KeyKind } from '../event/account.js';
import { generateKey } from './keys.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';

export type AccountsResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: 'NOT_FOUND' | 'INVALID_REQUEST'; readonly message: string };

const fail = (code: 'NOT_FOUND' | 'INVALID_REQUEST', message: string) => ({ ok: false as const, code, message });

/** A key lists at most this many browser origins. */
export const MAX_ORIGINS = 50;

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

/** Accounts and keys, shared by the admin API, the CLI and first start. */
export class Accounts {
  constructor(
    private readonly store: AccountStore,
    private readonly plans: PlanTable,
    private readonly clock: Clock,
  ) {}

  private unknownPlan(plan: string) {
    return fail('INVALID_REQUEST', `Unknown plan "${plan}"; plans: ${Object.keys(this.plans).join(', ')}.`);
  }

  async create(name: string, plan: string): Promise<AccountsResult<Account>> {
    if (!planNamed(this.plans, plan)) return this.unknownPlan(plan);
    const account = await this.store.createAccount({ id: newId('acc'), name, plan, createdAt: this.clock.now() });
    return { ok: true, value: account };
  }

  async changePlan(id: string, plan: string): Promise<AccountsResult<Account>> {
    if (!planNamed(this.plans, plan)) return this.unknownPlan(plan);
    const account = await this.store.updateAccount(id, { plan });
    return account ? { ok: true, value: account } : fail('NOT_FOUND', `No account ${id}.`);
  }

  async createKey(accountId: string, kind: KeyKind, allowedOrigins: readonly string[] = []): Promise<AccountsResult<{ record: ApiKeyRecord; key: string }>> {
    if (!(await this.store.getAccount(accountId))) return fail('NOT_FOUND', `No account ${accountId}.`);
    const problem = originsProblem(allowedOrigins);
    if (problem) return fail('INVALID_REQUEST', problem);
    const generated = generateKey(kind);
    const record = await this.store.createKey({
      id: newId('key'),
      accountId,
      kind,
      hash: generated.hash,
      prefix: generated.prefix,
      allowedOrigins,
      createdAt: this.clock.now(),
    });
    return { ok: true, value: { record, key: generated.key } };
  }

  async revokeKey(id: string): Promise<AccountsResult<true>> {
    return (await this.store.revokeKey(id, this.clock.now())) ? { ok: true, value: true } : fail('NOT_FOUND', `No key ${id}.`);
  }

  /** Replaces the browser origins a publishable key is accepted from (secret keys are never used from browsers). */
  async setKeyOrigins(id: string, allowedOrigins: readonly string[]): Promise<AccountsResult<ApiKeyRecord>> {
    const problem = originsProblem(allowedOrigins);
    if (problem) return fail('INVALID_REQUEST', problem);
    const key = (await this.store.listKeys()).find((k) => k.id === id);
    if (!key) return fail('NOT_FOUND', `No key ${id}.`);
    if (key.kind !== 'publishable') return fail('INVALID_REQUEST', `Key ${id} is a secret key; allowed origins apply to publishable keys only.`);
    const updated = await this.store.setKeyOrigins(id, [...new Set(allowedOrigins)]);
    return updated ? { ok: true, value: updated } : fail('NOT_FOUND', `No key ${id}.`);
  }

  /** First start on an empty database: one account with a secret and a publishable key. */
  async bootstrap(plan: string): Promise<{ account: Account; secret: string; publishable: string; publishableId: string } | undefined> {
    if ((await this.store.countAccounts()) > 0) return undefined;
    const created = await this.create('default', plan);
    if (!created.ok) throw new Error(created.message);
    const secret = await this.createKey(created.value.id, 'secret');
    const publishable = await this.createKey(created.value.id, 'publishable', []);
    if (!secret.ok || !publishable.ok) throw new Error('could not create the first keys');
    return { account: created.value, secret: secret.value.key, publishable: publishable.value.key, publishableId: publishable.value.record.id };
  }
}
