import { planNamed, type PlanTable } from '../limits/plans.js';
import type { Store } from '../storage/store.js';
import type { ApiKeyRecord } from '../storage/types.js';
import type { Account, KeyKind } from '../event/account.js';
import { generateKey } from './keys.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';

export type AccountsResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: 'NOT_FOUND' | 'INVALID_REQUEST'; readonly message: string };

const fail = (code: 'NOT_FOUND' | 'INVALID_REQUEST', message: string) => ({ ok: false as const, code, message });

/** Accounts and keys, shared by the admin API, the CLI and first start. */
export class Accounts {
  constructor(
    private readonly store: Store,
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

  /** First start on an empty database: one account with a secret and a publishable key. */
  async bootstrap(plan: string): Promise<{ account: Account; secret: string; publishable: string } | undefined> {
    if ((await this.store.countAccounts()) > 0) return undefined;
    const created = await this.create('default', plan);
    if (!created.ok) throw new Error(created.message);
    const secret = await this.createKey(created.value.id, 'secret');
    const publishable = await this.createKey(created.value.id, 'publishable', []);
    if (!secret.ok || !publishable.ok) throw new Error('could not create the first keys');
    return { account: created.value, secret: secret.value.key, publishable: publishable.value.key };
  }
}
