import type { Transaction } from 'kysely';
import type { Database, WebhookDeliveriesTable } from '../schema.js';
import { OUTBOX_ENDPOINT_COLUMNS, type OutboxEndpoint } from '../webhooks/outbox.js';

/** The enabled endpoints of these accounts, by account: what the outbox rule matches alerts against. */
export async function enabledEndpoints(trx: Transaction<Database>, accountIds: readonly string[]): Promise<Map<string, OutboxEndpoint[]>> {
  const byAccount = new Map<string, OutboxEndpoint[]>(accountIds.map((a) => [a, []]));
  if (accountIds.length === 0) return byAccount;
  const rows = await trx
    .selectFrom('webhook_endpoints')
    .select(['account_id', ...OUTBOX_ENDPOINT_COLUMNS])
    .where('account_id', 'in', accountIds)
    .where('enabled', '=', 1)
    .execute();
  for (const { account_id, ...endpoint } of rows) byAccount.get(account_id)?.push(endpoint);
  return byAccount;
}

export async function insertDeliveries(trx: Transaction<Database>, rows: readonly WebhookDeliveriesTable[]): Promise<void> {
  if (rows.length > 0)
    await trx
      .insertInto('webhook_deliveries')
      .values([...rows])
      .execute();
}
