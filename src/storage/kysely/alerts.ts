import { sql, type RawBuilder } from 'kysely';
import type { AlertStore } from '../store.js';
import { readSortCursor, writeSortCursor } from '../sort-cursor.js';
import type { Actor, AlertFilter, AlertNote, AlertRow, AlertSort, AlertStatus, Page } from '../types.js';
import { alertRowOf, outboxRows } from '../webhooks/outbox.js';
import { likeLiteral, num, pageOf, type KyselyAccess, type Row } from './access.js';
import { bucketCounts, bucketOf } from './histogram.js';
import { searchCondition } from './search-sql.js';
import { enabledEndpoints, insertDeliveries } from './outbox.js';

/**
 * Alerts about an address: raised on it (subject `ip:<address>`) or naming it as the `ip` member
 * of their details (an actor's brute force records the address it came from). The details are
 * JSON text written by JSON.stringify, so the member is matched as that text.
 */
export const aboutAddress = (ip: string) => sql<boolean>`(subject = ${`ip:${ip}`} or details like ${`%"ip":${likeLiteral(JSON.stringify(ip))}%`} escape '\\')`;

/** Severity as a number, for sorting: the stored text's order is not the severities'. */
const SEVERITY_RANK = sql`(case severity when 'critical' then 4 when 'high' then 3 when 'medium' then 2 when 'low' then 1 else 0 end)`;
const SEVERITY_VALUE: Readonly<Record<string, number>> = { critical: 4, high: 3, medium: 2, low: 1 };

function alertSortKey(sort: AlertSort): RawBuilder<unknown> {
  if (sort === '-severity' || sort === 'severity') return SEVERITY_RANK;
  return sql.ref(sort.replace(/^-/, ''));
}

function alertSortValue(alert: AlertRow, sort: AlertSort): number {
  if (sort === '-severity' || sort === 'severity') return SEVERITY_VALUE[alert.severity] ?? 0;
  return sort.endsWith('first_seen') ? alert.firstSeen : alert.lastSeen;
}

/** The ORDER BY of a sort (its key, then id, both the same way); without one, the newest id first. */
function alertOrder(sort: AlertSort | undefined): RawBuilder<unknown> {
  if (sort === undefined) return sql`order by id desc`;
  return sort.startsWith('-') ? sql`order by ${alertSortKey(sort)} desc, id desc` : sql`order by ${alertSortKey(sort)} asc, id asc`;
}

function alertCursorCondition(sort: AlertSort | undefined, cursor: string): RawBuilder<unknown> {
  const after = sort === undefined ? undefined : readSortCursor(cursor);
  if (sort === undefined || after === undefined) return sql`id < ${cursor}`;
  const key = alertSortKey(sort);
  return sort.startsWith('-') ? sql`(${key}, id) < (${after.value}, ${after.id})` : sql`(${key}, id) > (${after.value}, ${after.id})`;
}

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
    const sort = filter.sort;
    const rows = await this.x.read('listAlerts', () =>
      sql<Row<'alerts'>>`select * from alerts where account_id = ${accountId} and ${this.alertConditions(accountId, filter, ids, cursor)}
        ${alertOrder(sort)} limit ${limit + 1}`
        .execute(this.x.db)
        .then((r) => r.rows),
    );
    // A sorted list's cursor is the last row's sort value and id; an unsorted one's its id.
    const page = pageOf(rows, limit, alertRowOf);
    if (sort === undefined || page.nextCursor === null) return page;
    const last = page.items.at(-1) as AlertRow;
    return { ...page, nextCursor: writeSortCursor(alertSortValue(last, sort), last.id) };
  }

  async alertHistogram(accountId: string, filter: AlertFilter, from: number, bucketMs: number, buckets: number): Promise<number[]> {
    if (this.x.unmatchable(accountId, filter.type, filter.typePrefix, filter.severity, filter.status, filter.actorId, filter.ip))
      return bucketCounts([], buckets);
    const until = from + bucketMs * buckets;
    const rows = await this.x.read('alertHistogram', () =>
      sql<{ b: number | string; n: number | string }>`select ${bucketOf(this.x.kind, 'first_seen', from, bucketMs)} as b, count(*) as n from alerts
        where account_id = ${accountId} and first_seen >= ${from} and first_seen < ${until}
        and ${this.alertConditions(accountId, filter, undefined, undefined)} group by b`
        .execute(this.x.db)
        .then((r) => r.rows),
    );
    return bucketCounts(rows, buckets);
  }

  /** The filter, ids and cursor as one condition on the alerts columns other than account_id. */
  private alertConditions(accountId: string, filter: AlertFilter, ids: readonly string[] | undefined, cursor: string | undefined): RawBuilder<boolean> {
    const parts: RawBuilder<unknown>[] = [];
    if (ids !== undefined) parts.push(sql`id in (${sql.join(ids)})`);
    if (filter.type !== undefined) parts.push(sql`type = ${filter.type}`);
    if (filter.typePrefix !== undefined) parts.push(sql`type like ${likeLiteral(filter.typePrefix) + '%'} escape '\\'`);
    if (filter.severity !== undefined) parts.push(sql`severity = ${filter.severity}`);
    if (filter.status !== undefined) parts.push(sql`status = ${filter.status}`);
    if (filter.actorId !== undefined) parts.push(sql`actor_id = ${filter.actorId}`);
    if (filter.ip !== undefined) parts.push(aboutAddress(filter.ip));
    if (filter.since !== undefined) parts.push(sql`last_seen >= ${filter.since}`);
    if (filter.until !== undefined) parts.push(sql`first_seen < ${filter.until}`);
    if (filter.assignee === null) parts.push(sql`assignee is null`);
    else if (filter.assignee !== undefined) parts.push(sql`assignee = ${filter.assignee}`);
    if (filter.query) parts.push(searchCondition(filter.query, 'alerts', this.x.kind, accountId));
    if (cursor !== undefined) parts.push(alertCursorCondition(filter.sort, cursor));
    return parts.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`${sql.join(parts, sql` and `)}`;
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

  async pruneAlerts(accountId: string, before: number): Promise<number> {
    if (this.x.unmatchable(accountId)) return 0;
    return this.x.guard('pruneAlerts', () =>
      this.x.db.transaction().execute(async (trx) => {
        const old = trx.selectFrom('alerts').select('id').where('account_id', '=', accountId).where('last_seen', '<', before);
        await trx.deleteFrom('alert_notes').where('account_id', '=', accountId).where('alert_id', 'in', old).execute();
        const result = await trx.deleteFrom('alerts').where('account_id', '=', accountId).where('last_seen', '<', before).executeTakeFirst();
        return Number(result.numDeletedRows);
      }),
    );
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
