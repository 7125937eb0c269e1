import { sql } from 'kysely';
import type { AlertStore } from '../store.js';
import type { Actor, AlertFilter, AlertNote, AlertRow, AlertStatus, Page } from '../types.js';
import { alertRowOf, outboxRows } from '../webhooks/outbox.js';
import { likeLiteral, num, pageOf, type KyselyAccess } from './access.js';
import { enabledEndpoints, insertDeliveries } from './outbox.js';

/**
 * Alerts about an address: raised on it (subject `ip:<address>`) or naming it as the `ip` member
 * of their details (an actor's brute force records the address it came from). The details are
 * JSON text written by JSON.stringify, so the member is matched as that text.
 */
export const aboutAddress = (ip: string) => sql<boolean>`(subject = ${`ip:${ip}`} or details like ${`%"ip":${likeLiteral(JSON.stringify(ip))}%`} escape '\\')`;

/** Alerts and alert notes over Kysely. */
export class KyselyAlertStore implements AlertStore {
  constructor(private readonly x: KyselyAccess) {}

  async getAlert(accountId: string, id: string): Promise<AlertRow | undefined> {
    if (this.x.unmatchable(accountId, id)) return undefined;
    const row = await this.x.read('getAlert', () =>
      this.x.db.selectFrom('alerts').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && alertRowOf(row);
  }

  async listAlerts(accountId: string, filter: AlertFilter, limit: number, cursor?: string): Promise<Page<AlertRow>> {
    if (this.x.unmatchable(accountId, cursor, filter.type, filter.typePrefix, filter.severity, filter.status, filter.actorId, filter.ip))
      return { items: [], nextCursor: null };
    const ids = filter.ids?.filter((id) => !this.x.unmatchable(id));
    if (ids !== undefined && ids.length === 0) return { items: [], nextCursor: null };
    let q = this.x.db.selectFrom('alerts').selectAll().where('account_id', '=', accountId);
    if (ids !== undefined) q = q.where('id', 'in', ids);
    if (filter.type !== undefined) q = q.where('type', '=', filter.type);
    if (filter.typePrefix !== undefined) q = q.where(sql<boolean>`type like ${likeLiteral(filter.typePrefix) + '%'} escape '\\'`);
    if (filter.severity !== undefined) q = q.where('severity', '=', filter.severity);
    if (filter.status !== undefined) q = q.where('status', '=', filter.status);
    if (filter.actorId !== undefined) q = q.where('actor_id', '=', filter.actorId);
    if (filter.ip !== undefined) q = q.where(aboutAddress(filter.ip));
    if (filter.since !== undefined) q = q.where('last_seen', '>=', filter.since);
    if (filter.until !== undefined) q = q.where('first_seen', '<', filter.until);
    if (filter.assignee === null) q = q.where('assignee', 'is', null);
    else if (filter.assignee !== undefined) q = q.where('assignee', '=', filter.assignee);
    if (cursor !== undefined) q = q.where('id', '<', cursor);
    const rows = await this.x.read('listAlerts', () =>
      q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute(),
    );
    return pageOf(rows, limit, alertRowOf);
  }

  async setAlertStatus(accountId: string, id: string, status: AlertStatus, at: number): Promise<AlertRow | undefined> {
    if (this.x.unmatchable(accountId, id)) return undefined;
    const row = await this.x.guard('setAlertStatus', () =>
      this.x.db.transaction().execute(async (trx) => {
        // The write comes first: on SQLite it takes the write lock at once (a read that later turns
        // into a write can fail against the commit writer), on PostgreSQL it locks the row.
        const changed = await trx
          .updateTable('alerts')
          .set({ status })
          .where('account_id', '=', accountId)
          .where('id', '=', id)
          .where('status', '!=', status)
          .executeTakeFirst();
        const found = await trx.selectFrom('alerts').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
        if (found !== undefined && num(changed.numUpdatedRows) > 0)
          await insertDeliveries(trx, outboxRows((await enabledEndpoints(trx, [accountId])).get(accountId) ?? [], 'alert.status_changed', found, at));
        return found;
      }),
    );
    return row && alertRowOf(row);
  }

  async assignAlert(accountId: string, id: string, assignee: string | null): Promise<AlertRow | undefined> {
    if (this.x.unmatchable(accountId, id, assignee ?? undefined)) return undefined;
    await this.x.guard('assignAlert', () =>
      this.x.db.updateTable('alerts').set({ assignee }).where('account_id', '=', accountId).where('id', '=', id).execute(),
    );
    return this.getAlert(accountId, id);
  }

  async addAlertNote(note: AlertNote): Promise<void> {
    await this.x.guard('addAlertNote', () =>
      this.x.db
        .insertInto('alert_notes')
        .values({
          id: note.id,
          account_id: note.accountId,
          alert_id: note.alertId,
          status: note.status,
          note: note.note,
          created_at: note.createdAt,
          author_kind: note.author?.kind ?? null,
          author_id: note.author?.id ?? null,
          author_label: note.author?.label ?? null,
        })
        .execute(),
    );
  }

  async listAlertNotes(accountId: string, alertId: string): Promise<readonly AlertNote[]> {
    if (this.x.unmatchable(accountId, alertId)) return [];
    const rows = await this.x.read('listAlertNotes', () =>
      this.x.db.selectFrom('alert_notes').selectAll().where('account_id', '=', accountId).where('alert_id', '=', alertId).orderBy('id').limit(500).execute(),
    );
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      alertId: r.alert_id,
      status: r.status as AlertStatus,
      note: r.note,
      createdAt: num(r.created_at),
      author: r.author_kind === null ? null : { kind: r.author_kind as Actor['kind'], id: r.author_id, label: r.author_label },
    }));
  }
}
