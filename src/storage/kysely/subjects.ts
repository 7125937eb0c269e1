import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import type { ScrubOptions, SubjectStore } from '../store.js';
import {
  ERASABLE_TABLES,
  type Actor,
  type AlertNote,
  type AlertStatus,
  type ErasableTable,
  type ErasedRows,
  type MentionRow,
  type SubjectJobProgress,
  type SubjectJobRow,
  type SuppressionRow,
} from '../types.js';
import { likeLiteral, num, parseJson, type KyselyAccess, type Row } from './access.js';

const toJob = (row: Row<'subject_jobs'>): SubjectJobRow => ({
  id: row.id,
  accountId: row.account_id,
  kind: 'erase',
  status: row.status as SubjectJobRow['status'],
  createdAt: num(row.created_at),
  updatedAt: num(row.updated_at),
  finishedAt: row.finished_at === null ? null : num(row.finished_at),
  identifiers: parseJson(row.identifiers),
  pending: row.pending === null ? null : parseJson(row.pending),
  suppressDays: num(row.suppress_days),
  step: row.step,
  doneSteps: num(row.done_steps),
  totalSteps: num(row.total_steps),
  counts: parseJson(row.counts),
  error: row.error,
  leaseOwner: row.lease_owner,
  leaseUntil: num(row.lease_until),
});

const toSuppression = (row: Row<'subject_suppressions'>): SuppressionRow => ({
  hash: row.hash,
  kind: row.kind,
  createdAt: num(row.created_at),
  until: num(row.until),
});

/** The forms a needle takes in a column: as written in plain text, and escaped inside a JSON string. */
function needleForms(needles: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const n of needles) {
    if (n.length === 0) continue;
    forms.add(n);
    forms.add(JSON.stringify(n).slice(1, -1));
  }
  return [...forms];
}

/** How long a rewrite waits for older snapshots to end before its scrub reports busy (and runs again after the job's lease). */
const SNAPSHOT_POLLS = 40;
const SNAPSHOT_POLL_MS = 250;

/**
 * Data subjects over Kysely: erasure jobs with their lease, the rows that may mention a subject
 * (a superset, found by a case-insensitive substring test; the caller decides on each row), the
 * deletes and rewrites of an erasure, and the suppression list.
 */
export class KyselySubjectStore implements SubjectStore {
  constructor(private readonly x: KyselyAccess) {}

  async createJob(job: SubjectJobRow): Promise<void> {
    await this.x.guard('createSubjectJob', () =>
      this.x.db
        .insertInto('subject_jobs')
        .values({
          id: job.id,
          account_id: job.accountId,
          kind: job.kind,
          status: job.status,
          created_at: job.createdAt,
          updated_at: job.updatedAt,
          finished_at: job.finishedAt,
          identifiers: JSON.stringify(job.identifiers),
          pending: job.pending === null ? null : JSON.stringify(job.pending),
          suppress_days: job.suppressDays,
          step: job.step,
          done_steps: job.doneSteps,
          total_steps: job.totalSteps,
          counts: JSON.stringify(job.counts),
          error: job.error,
          lease_owner: job.leaseOwner,
          lease_until: job.leaseUntil,
        })
        .execute(),
    );
  }

  async getJob(accountId: string, id: string): Promise<SubjectJobRow | undefined> {
    if (this.x.unmatchable(accountId, id)) return undefined;
    const row = await this.x.read('getSubjectJob', () =>
      this.x.db.selectFrom('subject_jobs').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toJob(row);
  }

  async listJobs(accountId: string, limit: number): Promise<readonly SubjectJobRow[]> {
    const rows = await this.x.read('listSubjectJobs', () =>
      this.x.db.selectFrom('subject_jobs').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').limit(limit).execute(),
    );
    return rows.map(toJob);
  }

  async claimJob(owner: string, now: number, leaseMs: number): Promise<SubjectJobRow | undefined> {
    for (let tries = 0; tries < 5; tries++) {
      const next = await this.x.read('claimSubjectJob', () =>
        this.x.db
          .selectFrom('subject_jobs')
          .select('id')
          .where('status', 'in', ['queued', 'running'])
          .where('lease_until', '<', now)
          .orderBy('created_at')
          .limit(1)
          .executeTakeFirst(),
      );
      if (next === undefined) return undefined;
      // Compare and set: of two instances claiming one job, the one whose update finds the lease
      // still expired takes it.
      const taken = await this.x.guard('claimSubjectJob', () =>
        this.x.db
          .updateTable('subject_jobs')
          .set({ lease_owner: owner, lease_until: now + leaseMs, status: 'running', updated_at: now })
          .where('id', '=', next.id)
          .where('status', 'in', ['queued', 'running'])
          .where('lease_until', '<', now)
          .executeTakeFirst(),
      );
      if (Number(taken.numUpdatedRows) === 1) {
        const row = await this.x.read('claimSubjectJob', () => this.x.db.selectFrom('subject_jobs').selectAll().where('id', '=', next.id).executeTakeFirst());
        if (row) return toJob(row);
      }
    }
    return undefined;
  }

  async updateJob(id: string, owner: string, progress: SubjectJobProgress): Promise<boolean> {
    const set: Record<string, unknown> = { lease_until: progress.leaseUntil, updated_at: progress.at };
    if (progress.status !== undefined) set.status = progress.status;
    if (progress.step !== undefined) set.step = progress.step;
    if (progress.doneSteps !== undefined) set.done_steps = progress.doneSteps;
    if (progress.counts !== undefined) set.counts = JSON.stringify(progress.counts);
    if (progress.error !== undefined) set.error = progress.error;
    if (progress.finishedAt !== undefined) set.finished_at = progress.finishedAt;
    if (progress.pending === null) set.pending = null;
    const result = await this.x.guard('updateSubjectJob', () =>
      this.x.db.updateTable('subject_jobs').set(set).where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst(),
    );
    return Number(result.numUpdatedRows) === 1;
  }

  async findMentions(
    table: ErasableTable,
    accountId: string,
    needles: readonly string[],
    after: string | undefined,
    limit: number,
  ): Promise<readonly MentionRow[]> {
    const forms = needleForms(needles).filter((f) => !this.x.unmatchable(f));
    if (forms.length === 0 || this.x.unmatchable(accountId, after)) return [];
    const { key, columns } = ERASABLE_TABLES[table];
    const like = this.x.kind === 'postgres' ? sql.raw('ilike') : sql.raw('like');
    const tests: RawBuilder<unknown>[] = [];
    for (const column of columns) for (const form of forms) tests.push(sql`${sql.ref(column)} ${like} ${'%' + likeLiteral(form) + '%'} escape '\\'`);
    const afterKey = after === undefined ? sql`` : sql`and ${sql.ref(key)} > ${after}`;
    const query = sql<Record<string, string | null>>`select ${sql.ref(key)} as k, ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table)}
      where account_id = ${accountId} ${afterKey} and (${sql.join(tests, sql` or `)})
      order by ${sql.ref(key)} limit ${limit}`;
    const rows = await this.x.read('findMentions', () => query.execute(this.x.db).then((r) => r.rows));
    return rows.map((row) => {
      const values: Record<string, string | null> = {};
      for (const column of columns) values[column] = row[column] ?? null;
      return { key: String(row.k), columns: values };
    });
  }

  async deleteRows(table: ErasableTable, accountId: string, keys: readonly string[]): Promise<ErasedRows> {
    if (keys.length === 0) return { count: 0, relations: [] };
    const { key } = ERASABLE_TABLES[table];
    return this.x.guard('eraseRows', async () => {
      const where = sql`where account_id = ${accountId} and ${sql.ref(key)} in (${sql.join(keys)})`;
      if (this.x.kind === 'sqlite') {
        const result = await sql`delete from ${sql.table(table)} ${where}`.execute(this.x.db);
        const count = Number(result.numAffectedRows ?? 0);
        return { count, relations: count > 0 ? [table] : [] };
      }
      // The partitions of the events table that held the rows: the ones the scrub vacuums.
      const rows = (await sql<{ relation: string }>`delete from ${sql.table(table)} ${where} returning tableoid::regclass::text as relation`.execute(this.x.db))
        .rows;
      return { count: rows.length, relations: [...new Set(rows.map((r) => r.relation))] };
    });
  }

  async rewriteRow(table: ErasableTable, accountId: string, rowKey: string, values: Readonly<Record<string, string | null>>): Promise<boolean> {
    const { key, columns } = ERASABLE_TABLES[table];
    const sets = Object.entries(values)
      .filter(([column]) => (columns as readonly string[]).includes(column))
      .map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
    if (sets.length === 0) return false;
    return this.x.guard('rewriteRow', async () => {
      const result = await sql`update ${sql.table(table)} set ${sql.join(sets)} where account_id = ${accountId} and ${sql.ref(key)} = ${rowKey}`.execute(
        this.x.db,
      );
      return Number(result.numAffectedRows ?? 0) === 1;
    });
  }

  async deleteEventSummaries(accountId: string, actors: readonly string[], addresses: readonly string[]): Promise<number> {
    if (this.x.kind !== 'sqlite' || (actors.length === 0 && addresses.length === 0)) return 0;
    return this.x.guard('eraseSummaries', () =>
      this.x.db.transaction().execute(async (trx) => {
        let n = 0;
        if (actors.length > 0)
          n += Number(
            (await trx.deleteFrom('event_actor_hours').where('account_id', '=', accountId).where('actor', 'in', actors).executeTakeFirst()).numDeletedRows,
          );
        if (addresses.length > 0)
          n += Number(
            (await trx.deleteFrom('event_ip_hours').where('account_id', '=', accountId).where('address', 'in', addresses).executeTakeFirst()).numDeletedRows,
          );
        // The writer remembers summary rows it wrote; a new epoch makes it forget them.
        if (n > 0)
          await trx
            .updateTable('event_hours_epoch')
            .set((eb) => ({ epoch: eb('epoch', '+', 1) }))
            .where('id', '=', 1)
            .execute();
        return n;
      }),
    );
  }

  async scrub(relations: readonly string[] | undefined, options: ScrubOptions = {}): Promise<boolean> {
    if (this.x.kind === 'postgres') {
      // A deleted or rewritten row stays in its page as a dead row version until VACUUM removes
      // it (and, with INDEX_CLEANUP ON, the index entries that point to it, however few). VACUUM
      // runs outside a transaction, one relation at a time; every connection of the pool runs in
      // autocommit. Without a list, every relation an erasure writes: the events table's
      // partitions all.
      const targets = relations ?? [...Object.keys(ERASABLE_TABLES), 'subject_jobs'];
      if (options.rewrite && !(await this.olderSnapshotsGone())) return false;
      for (const relation of new Set(targets)) {
        const name = sql.raw(quotedRelation(relation));
        if (options.rewrite) await this.x.guard('scrub', () => rewriteRelation(this.x.db, name));
        else await this.x.guard('scrub', () => sql`vacuum (index_cleanup on) ${name}`.execute(this.x.db));
        await options.between?.();
      }
      return true;
    }
    await this.x.guard('scrub', async () => {
      // The full-text indexes keep a deleted row's terms until their segments are merged:
      // merging them all drops every deleted row's terms; the old segments' pages are zeroed as
      // they are freed (every connection runs with secure_delete on, sqlite-pragmas.ts).
      await sql`insert into events_fts (events_fts) values ('optimize')`.execute(this.x.db);
      await sql`insert into events_trigram (events_trigram) values ('optimize')`.execute(this.x.db);
    });
    // Copies the pages into the database file and empties the WAL, so earlier versions of the
    // pages leave the WAL too; busy while a reader holds an old snapshot.
    const [result] = await this.x.guard('scrub', () => sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(this.x.db).then((r) => r.rows));
    return result !== undefined && Number(result.busy) === 0;
  }

  /**
   * Whether no session of the database (nor a standby, through a replication slot or its
   * feedback) holds a snapshot or transaction older than the erasure's writes, waiting a little
   * for those that do: a rewrite copies a deleted row version into the new files while such a
   * snapshot may still see it. Sessions of other roles count only when Vigil's role may read
   * their state (pg_read_all_stats).
   */
  private async olderSnapshotsGone(): Promise<boolean> {
    const [start] = await this.x.guard('scrub', () =>
      sql<{ next: string }>`select xid(pg_snapshot_xmax(pg_current_snapshot()))::text as next`.execute(this.x.db).then((r) => r.rows),
    );
    if (start === undefined) return false;
    const next = sql`${start.next}::xid`;
    for (let tries = 1; ; tries++) {
      const [held] = await this.x.guard('scrub', () =>
        sql<{ older: boolean }>`select exists (
            select from pg_stat_activity a cross join lateral (values (a.backend_xmin), (a.backend_xid)) v(x)
            where (a.datname = current_database() or a.backend_type = 'walsender') and a.pid <> pg_backend_pid() and v.x is not null and age(v.x) > age(${next})
            union all
            select from pg_replication_slots s where s.xmin is not null and age(s.xmin) > age(${next})
          ) as older`
          .execute(this.x.db)
          .then((r) => r.rows),
      );
      if (held?.older !== true) return true;
      if (tries >= SNAPSHOT_POLLS) return false;
      await sleep(SNAPSHOT_POLL_MS);
    }
  }

  async notesByIds(accountId: string, ids: readonly string[]): Promise<readonly AlertNote[]> {
    if (ids.length === 0) return [];
    const rows = await this.x.read('notesByIds', () =>
      this.x.db.selectFrom('alert_notes').selectAll().where('account_id', '=', accountId).where('id', 'in', ids).orderBy('id').execute(),
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

  async addSuppressions(accountId: string, entries: readonly { readonly hash: string; readonly kind: string }[], until: number, at: number): Promise<void> {
    if (entries.length === 0) return;
    await this.x.guard('addSuppressions', () =>
      this.x.db
        .insertInto('subject_suppressions')
        .values(entries.map((e) => ({ account_id: accountId, hash: e.hash, kind: e.kind, created_at: at, until })))
        .onConflict((oc) => oc.columns(['account_id', 'hash']).doUpdateSet({ until: (eb) => eb.ref('excluded.until'), created_at: at }))
        .execute(),
    );
  }

  async listSuppressions(accountId: string, now: number): Promise<readonly { readonly hash: string; readonly kind: string; readonly until: number }[]> {
    const rows = await this.x.read('listSuppressions', () =>
      this.x.db.selectFrom('subject_suppressions').select(['hash', 'kind', 'until']).where('account_id', '=', accountId).where('until', '>', now).execute(),
    );
    return rows.map((r) => ({ hash: r.hash, kind: r.kind, until: num(r.until) }));
  }

  async pageSuppressions(accountId: string, now: number, after: string | undefined, limit: number): Promise<readonly SuppressionRow[]> {
    if (this.x.unmatchable(accountId, after)) return [];
    const rows = await this.x.read('pageSuppressions', () => {
      let q = this.x.db.selectFrom('subject_suppressions').selectAll().where('account_id', '=', accountId).where('until', '>', now);
      if (after !== undefined) q = q.where('hash', '>', after);
      return q.orderBy('hash').limit(limit).execute();
    });
    return rows.map(toSuppression);
  }

  async removeSuppressions(accountId: string, hashes: readonly string[]): Promise<readonly SuppressionRow[]> {
    const wanted = hashes.filter((h) => !this.x.unmatchable(h));
    if (wanted.length === 0 || this.x.unmatchable(accountId)) return [];
    const rows = await this.x.guard('removeSuppressions', () =>
      this.x.db.deleteFrom('subject_suppressions').where('account_id', '=', accountId).where('hash', 'in', wanted).returningAll().execute(),
    );
    return rows.map(toSuppression);
  }

  async pruneSuppressions(now: number): Promise<number> {
    const result = await this.x.guard('pruneSuppressions', () => this.x.db.deleteFrom('subject_suppressions').where('until', '<=', now).executeTakeFirst());
    return Number(result.numDeletedRows);
  }
}

/**
 * Writes the relation's live rows into new files and rebuilds its indexes (its TOAST table's
 * too); the old files are dropped. Holds an ACCESS EXCLUSIVE lock on the relation throughout,
 * and takes as long as the relation is big: on its own connection, without the pool's statement
 * timeout.
 */
async function rewriteRelation(db: Kysely<Database>, name: RawBuilder<unknown>): Promise<void> {
  await db.connection().execute(async (connection) => {
    await sql`set statement_timeout = 0`.execute(connection);
    try {
      await sql`vacuum full ${name}`.execute(connection);
    } finally {
      await sql`reset statement_timeout`.execute(connection);
    }
  });
}

/** A relation name as SQL: a plain name quoted, a name `regclass` wrote (quoted where needed, maybe schema-qualified) as it is. */
function quotedRelation(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? `"${name}"` : name;
}
