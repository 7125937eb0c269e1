import { CompiledQuery, type Transaction } from 'kysely';
import { ALERT_UPDATE, alertRowFrom, conflictClause, TABLE_WRITES, type CommitPlan, type RowValues, type TableWrite } from './commit-plan.js';
import { enabledEndpoints, insertDeliveries } from './kysely/outbox.js';
import type { Database, WebhookDeliveriesTable } from './schema.js';
import { alertWriteOutbox, type OutboxReads } from './webhooks/outbox.js';
import { pgSearchText } from './search-text.js';

const unnestSql = new Map<TableWrite, string>();

/** Events with their indexed text, which PostgreSQL keeps in a column (the full-text and trigram indexes are over it). */
const EVENT_WRITE: TableWrite = { ...TABLE_WRITES.events, columns: [...TABLE_WRITES.events.columns, ['search_text', 'text']] };

/**
 * One statement for all the rows of a table, whatever their number: one array parameter per
 * column, unnested into rows (no parameter limit, one parse; Kysely's builder spends more time
 * building a many-row VALUES list than the database spends inserting it).
 */
function unnestInsert(write: TableWrite, rows: readonly RowValues[]): CompiledQuery {
  let text = unnestSql.get(write);
  if (text === undefined) {
    const names = write.columns.map(([c]) => c).join(', ');
    const arrays = write.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
    text = `insert into ${write.table} (${names}) select * from unnest(${arrays})${conflictClause(write)}`;
    unnestSql.set(write, text);
  }
  const n = rows.length;
  const columns = write.columns.map(() => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const row = rows[i] as RowValues;
    for (let c = 0; c < columns.length; c++) (columns[c] as unknown[])[i] = row[c];
  }
  return CompiledQuery.raw(text, columns);
}

/**
 * The deliveries of one alert write, decided before the write. When the rule asks for the stored
 * row (an update some endpoint wants), that row is read and locked, and the rule runs again with
 * it. The lock is the one the update takes anyway, taken first: a concurrent update of the same
 * alert waits, so two transactions cannot both see the old severity and both report the escalation.
 */
async function deliveriesOf(
  trx: Transaction<Database>,
  write: CommitPlan['alerts'][number],
  at: number,
  endpoints: OutboxReads['endpoints'],
): Promise<WebhookDeliveriesTable[]> {
  let wanted: { accountId: string; id: string } | undefined;
  const first = alertWriteOutbox(write, at, {
    endpoints,
    current: (accountId, id) => {
      wanted = { accountId, id };
      return undefined;
    },
  });
  if (wanted === undefined) return first;
  const { accountId, id } = wanted;
  const stored = await trx.selectFrom('alerts').selectAll().where('account_id', '=', accountId).where('id', '=', id).forUpdate().executeTakeFirst();
  return stored === undefined ? first : alertWriteOutbox(write, at, { endpoints, current: () => stored });
}

/**
 * Executes a commit plan (commit-plan.ts) in a PostgreSQL transaction. Contention-free rows first;
 * the rows other groups also update (alerts, usage) last, so their locks are held briefly.
 */
export async function writeCommitPlan(trx: Transaction<Database>, plan: CommitPlan): Promise<void> {
  if (plan.events.length > 0)
    await trx.executeQuery(
      unnestInsert(
        EVENT_WRITE,
        plan.events.map((row, i) => [...row, pgSearchText(plan.eventTexts[i] as string)]),
      ),
    );
  if (plan.idempotency.length > 0) await trx.executeQuery(unnestInsert(TABLE_WRITES.idempotency, plan.idempotency));
  if (plan.alerts.length > 0) {
    const endpointsOf = await enabledEndpoints(trx, [...new Set(plan.alerts.map((w) => w.row[1] as string))]);
    const endpoints = (accountId: string) => endpointsOf.get(accountId) ?? [];
    for (const write of plan.alerts) {
      const deliveries = await deliveriesOf(trx, write, plan.at, endpoints);
      const row = alertRowFrom(write.row);
      if (write.opened) await trx.insertInto('alerts').values(row).execute();
      else {
        const set = Object.fromEntries(ALERT_UPDATE.map((c) => [c, row[c]]));
        await trx.updateTable('alerts').set(set).where('id', '=', row.id).where('account_id', '=', row.account_id).execute();
      }
      await insertDeliveries(trx, deliveries);
    }
  }
  if (plan.monthly.length > 0) await trx.executeQuery(unnestInsert(TABLE_WRITES.monthly, plan.monthly));
  if (plan.daily.length > 0) await trx.executeQuery(unnestInsert(TABLE_WRITES.daily, plan.daily));
}
