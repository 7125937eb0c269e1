import { sql } from 'kysely';
import type { AuditStore } from '../store.js';
import type { AuditEntry, AuditFilter, Page } from '../types.js';
import { likeLiteral, num, pageOf, parseJson, type KyselyAccess, type Row } from './access.js';

const toEntry = (row: Row<'audit_log'>): AuditEntry => ({
  id: row.id,
  accountId: row.account_id,
  at: num(row.at),
  actor: { kind: row.actor_kind as AuditEntry['actor']['kind'], id: row.actor_id, label: row.actor_label },
  ip: row.ip,
  userAgent: row.user_agent,
  action: row.action,
  targetKind: row.target_kind,
  targetId: row.target_id,
  changes: parseJson(row.changes),
  details: parseJson(row.details),
});

/** The audit trail over Kysely: insert and select only (retention aside). */
export class KyselyAuditStore implements AuditStore {
  constructor(private readonly x: KyselyAccess) {}

  async append(entry: AuditEntry): Promise<void> {
    await this.x.guard('appendAudit', () =>
      this.x.db
        .insertInto('audit_log')
        .values({
          id: entry.id,
          account_id: entry.accountId,
          at: entry.at,
          actor_kind: entry.actor.kind,
          actor_id: entry.actor.id,
          actor_label: entry.actor.label,
          ip: entry.ip,
          user_agent: entry.userAgent,
          action: entry.action,
          target_kind: entry.targetKind,
          target_id: entry.targetId,
          changes: JSON.stringify(entry.changes),
          details: JSON.stringify(entry.details),
        })
        .execute(),
    );
  }

  async list(accountId: string, filter: AuditFilter, limit: number, cursor?: string): Promise<Page<AuditEntry>> {
    if (this.x.unmatchable(accountId, cursor, filter.actorId, filter.action, filter.targetId)) return { items: [], nextCursor: null };
    let q = this.x.db.selectFrom('audit_log').selectAll().where('account_id', '=', accountId);
    if (filter.actorId !== undefined) q = q.where('actor_id', '=', filter.actorId);
    if (filter.action !== undefined)
      q = filter.action.endsWith('.')
        ? q.where(sql<boolean>`action like ${likeLiteral(filter.action) + '%'} escape '\\'`)
        : q.where('action', '=', filter.action);
    if (filter.targetId !== undefined) q = q.where('target_id', '=', filter.targetId);
    if (filter.since !== undefined) q = q.where('at', '>=', filter.since);
    if (filter.until !== undefined) q = q.where('at', '<', filter.until);
    if (cursor !== undefined) q = q.where('id', '<', cursor);
    const rows = await this.x.read('listAudit', () =>
      q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute(),
    );
    return pageOf(rows, limit, toEntry);
  }

  async prune(accountId: string, before: number): Promise<number> {
    if (this.x.unmatchable(accountId)) return 0;
    const result = await this.x.guard('pruneAudit', () =>
      this.x.db.deleteFrom('audit_log').where('account_id', '=', accountId).where('at', '<', before).executeTakeFirst(),
    );
    return num(result.numDeletedRows);
  }
}
