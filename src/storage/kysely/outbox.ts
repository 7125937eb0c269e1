import type { Transaction } from 'kysely';
import type { AlertsTable, Database, WebhookDeliveriesTable } from '../schema.js';
import { anyMatch, isEscalation, OUTBOX_ENDPOINT_COLUMNS, outboxRows, updatedAlert, type AlertUpdate, type OutboxEndpoint } from '../webhooks/outbox.js';

/** Endpoints of each account, looked up once per transaction. */
export type EndpointCache = Map<string, readonly OutboxEndpoint[]>;

export async function enabledEndpoints(trx: Transaction<Database>, accountId: string, cache: EndpointCache): Promise<readonly OutboxEndpoint[]> {
  let endpoints = cache.get(accountId);
  if (endpoints === undefined) {
    endpoints = await trx
      .selectFrom('webhook_endpoints')
      .select(OUTBOX_ENDPOINT_COLUMNS)
      .where('account_id', '=', accountId)
      .where('enabled', '=', 1)
      .execute();
    cache.set(accountId, endpoints);
  }
  return endpoints;
}

const lockedAlert = (trx: Transaction<Database>, postgres: boolean, accountId: string, id: string) => {
  const q = trx.selectFrom('alerts').selectAll().where('account_id', '=', accountId).where('id', '=', id);
  // The row lock the update takes anyway, taken first: a concurrent update of the same alert
  // waits, so two transactions cannot both see the old severity and both report the escalation.
  return (postgres ? q.forUpdate() : q).executeTakeFirst();
};

/**
 * The deliveries of one alert write in a Kysely transaction, computed before the write (an
 * update is compared with the row it replaces) and inserted by `insertDeliveries`.
 */
export async function alertWriteOutbox(
  trx: Transaction<Database>,
  postgres: boolean,
  write: { opened: boolean; row: AlertsTable; update: AlertUpdate },
  at: number,
  cache: EndpointCache,
): Promise<WebhookDeliveriesTable[]> {
  const endpoints = await enabledEndpoints(trx, write.row.account_id, cache);
  if (endpoints.length === 0) return [];
  if (write.opened) return outboxRows(endpoints, 'alert.opened', write.row, at);
  if (!anyMatch(endpoints, write.row)) return [];
  const previous = await lockedAlert(trx, postgres, write.row.account_id, write.row.id);
  if (previous === undefined) return [];
  const next = updatedAlert(previous, write.update);
  return isEscalation(previous, next) ? outboxRows(endpoints, 'alert.escalated', next, at) : [];
}

export async function insertDeliveries(trx: Transaction<Database>, rows: readonly WebhookDeliveriesTable[]): Promise<void> {
  if (rows.length > 0)
    await trx
      .insertInto('webhook_deliveries')
      .values([...rows])
      .execute();
}
