import { sql } from 'kysely';
import { fullScopes, type Account, type KeyKind, type KeyScope } from '../../event/account.js';
import type { AccountStore, NewKey } from '../store.js';
import type { ApiKeyRecord } from '../types.js';
import { num, parseJson, type KyselyAccess, type Row } from './access.js';

function toAccount(row: Row<'accounts'>): Account {
  return { id: row.id, name: row.name, plan: row.plan, createdAt: num(row.created_at), settings: parseJson(row.settings) };
}

function toKey(row: Row<'api_keys'>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as KeyKind,
    prefix: row.prefix,
    allowedOrigins: parseJson(row.allowed_origins),
    createdAt: num(row.created_at),
    revokedAt: row.revoked_at === null ? null : num(row.revoked_at),
    scopes: row.scopes === null ? fullScopes(row.kind as KeyKind) : (row.scopes.split(',').filter((s) => s.length > 0) as KeyScope[]),
    name: row.name,
  };
}

/** The advisory lock that serialises creating the first account (an arbitrary constant of Vigil's). */
const FIRST_ACCOUNT_LOCK = 0x76_69_67_01;

/** Accounts and API keys over Kysely. */
export class KyselyAccountStore implements AccountStore {
  constructor(private readonly x: KyselyAccess) {}

  async createAccount(input: { id: string; name: string; plan: string; createdAt: number }): Promise<Account> {
    const row = { id: input.id, name: input.name, plan: input.plan, created_at: input.createdAt, settings: '{}' };
    await this.x.guard('createAccount', () => this.x.db.insertInto('accounts').values(row).execute());
    return toAccount(row);
  }

  async createFirstAccount(input: { id: string; name: string; plan: string; createdAt: number }): Promise<Account | undefined> {
    const row = { id: input.id, name: input.name, plan: input.plan, created_at: input.createdAt, settings: '{}' };
    const inserted = await this.x.guard('createFirstAccount', () =>
      this.x.db.transaction().execute(async (trx) => {
        // Two instances starting together on PostgreSQL would each see no account under READ
        // COMMITTED: a transaction-scoped advisory lock makes the check and the insert one step.
        // SQLite takes its write lock with the insert itself.
        if (this.x.kind === 'postgres') await sql`select pg_advisory_xact_lock(${FIRST_ACCOUNT_LOCK})`.execute(trx);
        const result = await sql`insert into accounts (id, name, plan, created_at, settings)
          select ${row.id}, ${row.name}, ${row.plan}, ${row.created_at}, ${row.settings} where not exists (select 1 from accounts)`.execute(trx);
        return num(result.numAffectedRows ?? 0);
      }),
    );
    return inserted > 0 ? toAccount(row) : undefined;
  }

  async getAccount(id: string): Promise<Account | undefined> {
    if (this.x.unmatchable(id)) return undefined;
    const row = await this.x.read('getAccount', () => this.x.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst());
    return row && toAccount(row);
  }

  async listAccounts(): Promise<readonly Account[]> {
    const rows = await this.x.read('listAccounts', () => this.x.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute());
    return rows.map(toAccount);
  }

  async countAccounts(): Promise<number> {
    const row = await this.x.read('countAccounts', () =>
      this.x.db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow(),
    );
    return num(row.n);
  }

  async updateAccount(id: string, patch: { plan?: string; name?: string; settings?: Record<string, unknown> }): Promise<Account | undefined> {
    if (this.x.unmatchable(id)) return undefined;
    const values: Partial<Row<'accounts'>> = {};
    if (patch.plan !== undefined) values.plan = patch.plan;
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.settings !== undefined) values.settings = JSON.stringify(patch.settings);
    if (Object.keys(values).length > 0) {
      await this.x.guard('updateAccount', () => this.x.db.updateTable('accounts').set(values).where('id', '=', id).execute());
    }
    return this.getAccount(id);
  }

  async createKey(input: NewKey): Promise<ApiKeyRecord> {
    const row: Row<'api_keys'> = {
      id: input.id,
      account_id: input.accountId,
      kind: input.kind,
      hash: input.hash,
      prefix: input.prefix,
      allowed_origins: JSON.stringify(input.allowedOrigins),
      created_at: input.createdAt,
      revoked_at: null,
      scopes: input.scopes === undefined ? null : input.scopes.join(','),
      name: input.name ?? null,
    };
    await this.x.guard('createKey', () => this.x.db.insertInto('api_keys').values(row).execute());
    return toKey(row);
  }

  async findKeyByHash(hash: string): Promise<{ key: ApiKeyRecord; hash: string; account: Account } | undefined> {
    if (this.x.unmatchable(hash)) return undefined;
    const row = await this.x.read('findKeyByHash', () =>
      this.x.db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select([
          'api_keys.id as id',
          'api_keys.account_id as account_id',
          'api_keys.kind as kind',
          'api_keys.hash as hash',
          'api_keys.prefix as prefix',
          'api_keys.allowed_origins as allowed_origins',
          'api_keys.created_at as created_at',
          'api_keys.revoked_at as revoked_at',
          'api_keys.scopes as scopes',
          'api_keys.name as name',
          'accounts.name as account_name',
          'accounts.plan as account_plan',
          'accounts.created_at as account_created_at',
          'accounts.settings as account_settings',
        ])
        .where('api_keys.hash', '=', hash)
        .executeTakeFirst(),
    );
    if (!row) return undefined;
    return {
      key: toKey(row),
      hash: row.hash,
      account: toAccount({
        id: row.account_id,
        name: row.account_name,
        plan: row.account_plan,
        created_at: row.account_created_at,
        settings: row.account_settings,
      }),
    };
  }

  async listKeys(accountId?: string): Promise<readonly ApiKeyRecord[]> {
    if (this.x.unmatchable(accountId)) return [];
    let query = this.x.db.selectFrom('api_keys').selectAll();
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const rows = await this.x.read('listKeys', () => query.orderBy('created_at').orderBy('id').execute());
    return rows.map(toKey);
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    if (this.x.unmatchable(id)) return undefined;
    const row = await this.x.read('getKey', () => this.x.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst());
    return row && toKey(row);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    if (this.x.unmatchable(id)) return false;
    const result = await this.x.guard('revokeKey', () =>
      this.x.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst(),
    );
    if (num(result.numUpdatedRows) > 0) return true;
    const exists = await this.x.guard('revokeKey', () => this.x.db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst());
    return exists !== undefined;
  }

  async setKeyOrigins(id: string, allowedOrigins: readonly string[]): Promise<ApiKeyRecord | undefined> {
    if (this.x.unmatchable(id)) return undefined;
    await this.x.guard('setKeyOrigins', () =>
      this.x.db
        .updateTable('api_keys')
        .set({ allowed_origins: JSON.stringify(allowedOrigins) })
        .where('id', '=', id)
        .executeTakeFirst(),
    );
    const row = await this.x.guard('setKeyOrigins', () => this.x.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst());
    return row ? toKey(row) : undefined;
  }

  async updateKey(id: string, patch: { readonly scopes?: readonly KeyScope[]; readonly name?: string | null }): Promise<ApiKeyRecord | undefined> {
    if (this.x.unmatchable(id)) return undefined;
    const values: { scopes?: string; name?: string | null } = {};
    if (patch.scopes !== undefined) values.scopes = patch.scopes.join(',');
    if (patch.name !== undefined) values.name = patch.name;
    if (Object.keys(values).length > 0) await this.x.guard('updateKey', () => this.x.db.updateTable('api_keys').set(values).where('id', '=', id).execute());
    const row = await this.x.guard('updateKey', () => this.x.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst());
    return row ? toKey(row) : undefined;
  }
}
