import { sql } from 'kysely';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.js';
import type { Page } from '../types.js';
import type { AttemptOutcome, EndpointPatch, WebhookStore } from '../webhooks/store.js';
import type { DeliveryEvent, DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookFormat } from '../webhooks/types.js';
import type { Severity } from '../../event/classification.js';
import { num, numOrNull, pageOf, type KyselyAccess } from './access.js';
import { HOUR_MS } from '../../util/duration.js';

function toEndpoint(row: WebhookEndpointsTable): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description,
    format: row.format as WebhookFormat,
    minSeverity: row.min_severity as Severity,
    alertTypes: JSON.parse(row.alert_types) as string[],
    killChainsOnly: num(row.kill_chains_only) === 1,
    enabled: num(row.enabled) === 1,
    disabledReason: row.disabled_reason,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: numOrNull(row.previous_secret_until),
    failingSince: numOrNull(row.failing_since),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

function toDelivery(row: WebhookDeliveriesTable): WebhookDelivery {
  return {
    id: row.id,
    accountId: row.account_id,
    endpointId: row.endpoint_id,
    alertId: row.alert_id,
    event: row.event as DeliveryEvent,
    alert: JSON.parse(row.alert) as Record<string, unknown>,
    status: row.status as DeliveryStatus,
    attempts: num(row.attempts),
    nextAttemptAt: num(row.next_attempt_at),
    lastAttemptAt: numOrNull(row.last_attempt_at),
    lastStatus: numOrNull(row.last_status),
    lastError: row.last_error,
    createdAt: num(row.created_at),
    finishedAt: numOrNull(row.finished_at),
  };
}

/** `last_error` of an attempt that left no outcome. */
const UNRECORDED_ERROR = 'no outcome was recorded for the last attempt';

/** Endpoints and deliveries over Kysely (the interface says what each method does). */
export class KyselyWebhookStore implements WebhookStore {
  constructor(private readonly x: KyselyAccess) {}

  async createEndpoint(row: WebhookEndpointsTable): Promise<WebhookEndpoint> {
    await this.x.guard('createEndpoint', () => this.x.db.insertInto('webhook_endpoints').values(row).execute());
    return toEndpoint(row);
  }

  async countEndpoints(accountId: string): Promise<number> {
    const row = await this.x.guard('countEndpoints', () =>
      this.x.db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    );
    return num(row.n);
  }

  async listEndpoints(accountId: string): Promise<readonly WebhookEndpoint[]> {
    const rows = await this.x.guard('listEndpoints', () =>
      this.x.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    );
    return rows.map(toEndpoint);
  }

  async getEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.x.guard('getEndpoint', () =>
      this.x.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toEndpoint(row);
  }

  async updateEndpoint(accountId: string, id: string, patch: EndpointPatch, at: number): Promise<WebhookEndpoint | undefined> {
    await this.x.guard('updateEndpoint', () =>
      this.x.db
        .updateTable('webhook_endpoints')
        .set({ ...patch, updated_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .execute(),
    );
    return this.getEndpoint(accountId, id);
  }

  async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
    return this.x.guard('deleteEndpoint', () =>
      this.x.db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('webhook_endpoints').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
        await trx.deleteFrom('webhook_deliveries').where('account_id', '=', accountId).where('endpoint_id', '=', id).execute();
        return num(result.numDeletedRows) > 0;
      }),
    );
  }

  async insertDelivery(row: WebhookDeliveriesTable): Promise<void> {
    await this.x.guard('insertDelivery', () => this.x.db.insertInto('webhook_deliveries').values(row).execute());
  }

  async getDelivery(accountId: string, id: string): Promise<WebhookDelivery | undefined> {
    const row = await this.x.guard('getDelivery', () =>
      this.x.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toDelivery(row);
  }

  async listDeliveries(accountId: string, endpointId: string, limit: number, cursor?: string): Promise<Page<WebhookDelivery>> {
    let q = this.x.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', accountId).where('endpoint_id', '=', endpointId);
    if (cursor !== undefined) q = q.where('id', '<', cursor);
    const rows = await this.x.guard('listDeliveries', () =>
      q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute(),
    );
    return pageOf(rows, limit, toDelivery);
  }

  async pruneFinishedDeliveries(before: number): Promise<number> {
    const result = await this.x.guard('pruneFinishedDeliveries', () =>
      this.x.db.deleteFrom('webhook_deliveries').where('status', '!=', 'pending').where('finished_at', '<', before).executeTakeFirst(),
    );
    return num(result.numDeletedRows);
  }

  /** The rows are chosen with FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite has one writer, so the statement alone is atomic. */
  async claimDue(now: number, leaseMs: number, owner: string, limit: number): Promise<readonly WebhookDelivery[]> {
    const skipLocked = this.x.kind === 'postgres' ? sql`for update skip locked` : sql``;
    const result = await this.x.guard('claimDue', () =>
      sql<WebhookDeliveriesTable>`
        update webhook_deliveries set lease_until = ${now + leaseMs}, lease_owner = ${owner},
          attempts = case when lease_owner is null then attempts else attempts + 1 end,
          last_attempt_at = case when lease_owner is null then last_attempt_at else lease_until - ${leaseMs} end,
          last_status = case when lease_owner is null then last_status else null end,
          last_error = case when lease_owner is null then last_error else ${UNRECORDED_ERROR} end
        where id in (
          select id from webhook_deliveries
          where status = 'pending' and next_attempt_at <= ${now} and lease_until <= ${now}
          order by next_attempt_at limit ${limit} ${skipLocked}
        )
        returning *`.execute(this.x.db),
    );
    return result.rows.map(toDelivery);
  }

  async holdAttempt(delivery: WebhookDelivery, owner: string, fallback: Pick<AttemptOutcome, 'status' | 'nextAttemptAt' | 'at'>): Promise<boolean> {
    const result = await this.x.guard('holdAttempt', () =>
      this.x.db
        .updateTable('webhook_deliveries')
        .set({
          status: fallback.status,
          next_attempt_at: fallback.nextAttemptAt,
          finished_at: fallback.status === 'pending' ? null : fallback.at,
        })
        .where('account_id', '=', delivery.accountId)
        .where('id', '=', delivery.id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async finishAttempt(delivery: WebhookDelivery, owner: string, outcome: AttemptOutcome, countsAsAttempt = true): Promise<boolean> {
    const result = await this.x.guard('finishAttempt', () =>
      this.x.db
        .updateTable('webhook_deliveries')
        .set({
          status: outcome.status,
          attempts: countsAsAttempt ? delivery.attempts + 1 : delivery.attempts,
          next_attempt_at: outcome.nextAttemptAt,
          lease_until: 0,
          lease_owner: null,
          ...(countsAsAttempt ? { last_attempt_at: outcome.at, last_status: outcome.lastStatus, last_error: outcome.lastError } : {}),
          finished_at: outcome.status === 'pending' ? null : outcome.at,
        })
        .where('account_id', '=', delivery.accountId)
        .where('id', '=', delivery.id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async recordEndpointOutcome(
    accountId: string,
    id: string,
    ok: boolean,
    at: number,
    disableAfterMs: number,
    lastProblem: string,
  ): Promise<string | undefined> {
    return this.x.guard('recordEndpointOutcome', async () => {
      if (ok) {
        await this.x.db
          .updateTable('webhook_endpoints')
          .set({ failing_since: null })
          .where('account_id', '=', accountId)
          .where('id', '=', id)
          .where('failing_since', 'is not', null)
          .execute();
        return undefined;
      }
      await this.x.db
        .updateTable('webhook_endpoints')
        .set({ failing_since: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('failing_since', 'is', null)
        .execute();
      const reason = `Disabled automatically: every delivery failed for ${Math.round(disableAfterMs / HOUR_MS)} hours (last: ${lastProblem}).`;
      const disabled = await this.x.db
        .updateTable('webhook_endpoints')
        .set({ enabled: 0, disabled_reason: reason, updated_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('enabled', '=', 1)
        .where('failing_since', '<=', at - disableAfterMs)
        .executeTakeFirst();
      return num(disabled.numUpdatedRows) > 0 ? reason : undefined;
    });
  }
}
