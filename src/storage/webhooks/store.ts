import { sql, type Kysely, type Transaction } from 'kysely';
import type { AlertsTable, Database, WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.js';
import { translate } from '../kysely-store.js';
import type { Page } from '../types.js';
import { anyMatch, isEscalation, OUTBOX_ENDPOINT_COLUMNS, outboxRows, updatedAlert, type AlertUpdate, type OutboxEndpoint } from './outbox.js';
import type { DeliveryEvent, DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookFormat } from './types.js';
import type { Severity } from '../../event/classification.js';

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

export function toEndpoint(row: WebhookEndpointsTable): WebhookEndpoint {
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

export function toDelivery(row: WebhookDeliveriesTable): WebhookDelivery {
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

/** Endpoints of each account, looked up once per transaction. */
export type EndpointCache = Map<string, readonly OutboxEndpoint[]>;

async function enabledEndpoints(trx: Transaction<Database>, accountId: string, cache: EndpointCache): Promise<readonly OutboxEndpoint[]> {
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

/**
 * Sets an alert's status and writes the deliveries of the change in one transaction.
 * Undefined when the alert does not exist in this account.
 */
export async function setStatusWithOutbox(db: Kysely<Database>, accountId: string, id: string, status: string, at: number): Promise<AlertsTable | undefined> {
  return db.transaction().execute(async (trx) => {
    // The write comes first: on SQLite it takes the write lock at once (a read that later turns
    // into a write can fail against the commit writer), on PostgreSQL it locks the row.
    const changed = await trx
      .updateTable('alerts')
      .set({ status })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('status', '!=', status)
      .executeTakeFirst();
    const row = await trx.selectFrom('alerts').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    if (row !== undefined && num(changed.numUpdatedRows) > 0)
      await insertDeliveries(trx, outboxRows(await enabledEndpoints(trx, accountId, new Map()), 'alert.status_changed', row, at));
    return row;
  });
}

export type EndpointPatch = Partial<
  Pick<
    WebhookEndpointsTable,
    | 'url'
    | 'description'
    | 'format'
    | 'min_severity'
    | 'alert_types'
    | 'kill_chains_only'
    | 'enabled'
    | 'disabled_reason'
    | 'secret'
    | 'previous_secret'
    | 'previous_secret_until'
    | 'failing_since'
  >
>;

/** `last_error` of an attempt that left no outcome. */
const UNRECORDED_ERROR = 'no outcome was recorded for the last attempt';

/** What an attempt left behind. */
export interface AttemptOutcome {
  readonly status: DeliveryStatus;
  readonly nextAttemptAt: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly at: number;
}

/**
 * Endpoints and deliveries. Every read and write by id also matches the account. Database
 * failures become StoreUnavailableError / StoreRejectedError as in the Store.
 */
export class WebhookStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly postgres: boolean,
  ) {}

  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translate(what, err);
    }
  }

  async createEndpoint(row: WebhookEndpointsTable): Promise<WebhookEndpoint> {
    await this.run('createEndpoint', () => this.db.insertInto('webhook_endpoints').values(row).execute());
    return toEndpoint(row);
  }

  async countEndpoints(accountId: string): Promise<number> {
    const row = await this.run('countEndpoints', () =>
      this.db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow(),
    );
    return num(row.n);
  }

  async listEndpoints(accountId: string): Promise<readonly WebhookEndpoint[]> {
    const rows = await this.run('listEndpoints', () =>
      this.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    );
    return rows.map(toEndpoint);
  }

  async getEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.run('getEndpoint', () =>
      this.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toEndpoint(row);
  }

  async updateEndpoint(accountId: string, id: string, patch: EndpointPatch, at: number): Promise<WebhookEndpoint | undefined> {
    await this.run('updateEndpoint', () =>
      this.db
        .updateTable('webhook_endpoints')
        .set({ ...patch, updated_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .execute(),
    );
    return this.getEndpoint(accountId, id);
  }

  /** Deletes the endpoint and its deliveries; false when there was no such endpoint. */
  async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
    return this.run('deleteEndpoint', () =>
      this.db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('webhook_endpoints').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
        await trx.deleteFrom('webhook_deliveries').where('account_id', '=', accountId).where('endpoint_id', '=', id).execute();
        return num(result.numDeletedRows) > 0;
      }),
    );
  }

  async insertDelivery(row: WebhookDeliveriesTable): Promise<void> {
    await this.run('insertDelivery', () => this.db.insertInto('webhook_deliveries').values(row).execute());
  }

  async getDelivery(accountId: string, id: string): Promise<WebhookDelivery | undefined> {
    const row = await this.run('getDelivery', () =>
      this.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst(),
    );
    return row && toDelivery(row);
  }

  /** Newest first. */
  async listDeliveries(accountId: string, endpointId: string, limit: number, cursor?: string): Promise<Page<WebhookDelivery>> {
    let q = this.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', accountId).where('endpoint_id', '=', endpointId);
    if (cursor !== undefined) q = q.where('id', '<', cursor);
    const rows = await this.run('listDeliveries', () =>
      q
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute(),
    );
    const items = rows.slice(0, limit).map(toDelivery);
    return { items, nextCursor: rows.length > limit ? (items[items.length - 1]?.id ?? null) : null };
  }

  /** Retention: deletes delivered and failed deliveries that finished before the cut-off. */
  async pruneFinishedDeliveries(before: number): Promise<number> {
    const result = await this.run('pruneFinishedDeliveries', () =>
      this.db.deleteFrom('webhook_deliveries').where('status', '!=', 'pending').where('finished_at', '<', before).executeTakeFirst(),
    );
    return num(result.numDeletedRows);
  }

  /**
   * Leases up to `limit` due deliveries to `owner` until now + leaseMs. On PostgreSQL the rows
   * are chosen with FOR UPDATE SKIP LOCKED, so instances claiming at once get disjoint sets;
   * SQLite has one writer, so the statement alone is atomic. A lease that runs out (its
   * instance died mid-delivery) makes the delivery due again once its held schedule allows
   * (holdAttempt). A delivery still leased to someone when it is claimed again is one whose
   * last attempt left no outcome: that attempt counts (it may have been sent), so the back-off
   * keeps growing.
   */
  async claimDue(now: number, leaseMs: number, owner: string, limit: number): Promise<readonly WebhookDelivery[]> {
    const skipLocked = this.postgres ? sql`for update skip locked` : sql``;
    const result = await this.run('claimDue', () =>
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
        returning *`.execute(this.db),
    );
    return result.rows.map(toDelivery);
  }

  /**
   * Before an attempt is sent: gives the delivery the status and next attempt it comes to if
   * the attempt's outcome is never recorded (`failed` when this is its last attempt, which a
   * listing shows until finishAttempt replaces it with the outcome). False when `owner` no
   * longer holds the lease.
   */
  async holdAttempt(delivery: WebhookDelivery, owner: string, fallback: Pick<AttemptOutcome, 'status' | 'nextAttemptAt' | 'at'>): Promise<boolean> {
    const result = await this.run('holdAttempt', () =>
      this.db
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

  /** Records an attempt's outcome if `owner` still holds the lease; false when it lost it. */
  async finishAttempt(delivery: WebhookDelivery, owner: string, outcome: AttemptOutcome, countsAsAttempt = true): Promise<boolean> {
    const result = await this.run('finishAttempt', () =>
      this.db
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

  /**
   * Tracks an endpoint's run of failures: a success ends it; a failure starts it or, once it
   * has lasted `disableAfterMs`, disables the endpoint with the reason. Returns the endpoint's
   * disabled reason when this call disabled it.
   */
  async recordEndpointOutcome(
    accountId: string,
    id: string,
    ok: boolean,
    at: number,
    disableAfterMs: number,
    lastProblem: string,
  ): Promise<string | undefined> {
    return this.run('recordEndpointOutcome', async () => {
      if (ok) {
        await this.db
          .updateTable('webhook_endpoints')
          .set({ failing_since: null })
          .where('account_id', '=', accountId)
          .where('id', '=', id)
          .where('failing_since', 'is not', null)
          .execute();
        return undefined;
      }
      await this.db
        .updateTable('webhook_endpoints')
        .set({ failing_since: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('failing_since', 'is', null)
        .execute();
      const reason = `Disabled automatically: every delivery failed for ${Math.round(disableAfterMs / 3_600_000)} hours (last: ${lastProblem}).`;
      const disabled = await this.db
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
