import type { ThreatModelStore } from '../store.js';
import type { ThreatModelRow, ThreatModelVersionRow } from '../types.js';
import { num, parseJson, type KyselyAccess, type Row } from './access.js';

function toThreatModel(row: Row<'threat_models'>): ThreatModelRow {
  return {
    id: row.id,
    accountId: row.account_id,
    version: num(row.version),
    enabled: num(row.enabled) === 1,
    definition: parseJson(row.definition),
    source: parseJson(row.source),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    suspendedAt: row.suspended_at === null ? null : num(row.suspended_at),
    suspendedReason: row.suspended_reason,
  };
}

/** Threat models and their versions over Kysely. */
export class KyselyThreatModelStore implements ThreatModelStore {
  constructor(private readonly x: KyselyAccess) {}

  async listThreatModels(accountId: string): Promise<readonly ThreatModelRow[]> {
    if (this.x.unmatchable(accountId)) return [];
    const rows = await this.x.read('listThreatModels', () =>
      this.x.db.selectFrom('threat_models').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    );
    return rows.map(toThreatModel);
  }

  async getThreatModel(accountId: string, id: string): Promise<ThreatModelRow | undefined> {
    if (this.x.unmatchable(accountId, id)) return undefined;
    const row = await this.x.read('getThreatModel', () =>
      this.x.db.selectFrom('threat_models').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toThreatModel(row);
  }

  async createThreatModel(input: Omit<ThreatModelRow, 'version' | 'updatedAt' | 'suspendedAt' | 'suspendedReason'>): Promise<ThreatModelRow> {
    const row: Row<'threat_models'> = {
      id: input.id,
      account_id: input.accountId,
      version: 1,
      enabled: input.enabled ? 1 : 0,
      definition: JSON.stringify(input.definition),
      source: JSON.stringify(input.source),
      created_at: input.createdAt,
      updated_at: input.createdAt,
      suspended_at: null,
      suspended_reason: null,
    };
    await this.x.guard('createThreatModel', () =>
      this.x.db.transaction().execute(async (trx) => {
        await trx.insertInto('threat_models').values(row).execute();
        await trx
          .insertInto('threat_model_versions')
          .values({ account_id: row.account_id, model_id: row.id, version: 1, definition: row.definition, source: row.source, created_at: row.created_at })
          .execute();
      }),
    );
    return toThreatModel(row);
  }

  async updateThreatModel(
    accountId: string,
    id: string,
    expectedVersion: number,
    change: { readonly enabled: boolean; readonly definition: Record<string, unknown>; readonly source: Record<string, unknown>; readonly at: number },
  ): Promise<ThreatModelRow | undefined> {
    if (this.x.unmatchable(accountId, id)) return undefined;
    const definition = JSON.stringify(change.definition);
    const source = JSON.stringify(change.source);
    const version = expectedVersion + 1;
    const updated = await this.x.guard('updateThreatModel', () =>
      this.x.db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('threat_models')
          .set({ version, enabled: change.enabled ? 1 : 0, definition, source, updated_at: change.at, suspended_at: null, suspended_reason: null })
          .where('account_id', '=', accountId)
          .where('id', '=', id)
          .where('version', '=', expectedVersion)
          .executeTakeFirst();
        if (num(result.numUpdatedRows) === 0) return false;
        await trx
          .insertInto('threat_model_versions')
          .values({ account_id: accountId, model_id: id, version, definition, source, created_at: change.at })
          .execute();
        return true;
      }),
    );
    return updated ? this.getThreatModel(accountId, id) : undefined;
  }

  async suspendThreatModel(accountId: string, id: string, version: number, at: number, reason: string): Promise<boolean> {
    if (this.x.unmatchable(accountId, id)) return false;
    const result = await this.x.guard('suspendThreatModel', () =>
      this.x.db
        .updateTable('threat_models')
        .set({ suspended_at: at, suspended_reason: reason })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('version', '=', version)
        .where('suspended_at', 'is', null)
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async deleteThreatModel(accountId: string, id: string): Promise<boolean> {
    if (this.x.unmatchable(accountId, id)) return false;
    return this.x.guard('deleteThreatModel', () =>
      this.x.db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('threat_models').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
        await trx.deleteFrom('threat_model_versions').where('account_id', '=', accountId).where('model_id', '=', id).execute();
        return num(result.numDeletedRows) > 0;
      }),
    );
  }

  async listThreatModelVersions(accountId: string, id: string): Promise<readonly ThreatModelVersionRow[]> {
    if (this.x.unmatchable(accountId, id)) return [];
    const rows = await this.x.read('listThreatModelVersions', () =>
      this.x.db
        .selectFrom('threat_model_versions')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('model_id', '=', id)
        .orderBy('version', 'desc')
        .execute(),
    );
    return rows.map((r) => ({
      modelId: r.model_id,
      accountId: r.account_id,
      version: num(r.version),
      definition: parseJson(r.definition),
      source: parseJson(r.source),
      createdAt: num(r.created_at),
    }));
  }
}
