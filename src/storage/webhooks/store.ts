import type { WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.js';
import type { Page } from '../types.js';
import type { DeliveryStatus, WebhookDelivery, WebhookEndpoint } from './types.js';

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

/** What an attempt left behind. */
export interface AttemptOutcome {
  readonly status: DeliveryStatus;
  readonly nextAttemptAt: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly at: number;
}

/**
 * Endpoints and deliveries (the outbox: Store.commit and AlertStore.setAlertStatus add the
 * deliveries of alert changes, webhooks/outbox.ts decides which). Every read and write by id
 * also matches the account. Database failures become StoreUnavailableError /
 * StoreRejectedError as in the Store.
 */
export interface WebhookStore {
  createEndpoint(row: WebhookEndpointsTable): Promise<WebhookEndpoint>;
  countEndpoints(accountId: string): Promise<number>;
  listEndpoints(accountId: string): Promise<readonly WebhookEndpoint[]>;
  getEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | undefined>;
  updateEndpoint(accountId: string, id: string, patch: EndpointPatch, at: number): Promise<WebhookEndpoint | undefined>;
  /** Deletes the endpoint and its deliveries; false when there was no such endpoint. */
  deleteEndpoint(accountId: string, id: string): Promise<boolean>;

  insertDelivery(row: WebhookDeliveriesTable): Promise<void>;
  getDelivery(accountId: string, id: string): Promise<WebhookDelivery | undefined>;
  /** Newest first. */
  listDeliveries(accountId: string, endpointId: string, limit: number, cursor?: string): Promise<Page<WebhookDelivery>>;
  /** Retention: deletes delivered and failed deliveries that finished before the cut-off. */
  pruneFinishedDeliveries(before: number): Promise<number>;

  /**
   * Leases up to `limit` due deliveries to `owner` until now + leaseMs. Instances claiming at
   * once get disjoint sets (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite has one writer). A lease
   * that runs out (its instance died mid-delivery) makes the delivery due again once its held
   * schedule allows (holdAttempt). A delivery still leased to someone when it is claimed again
   * is one whose last attempt left no outcome: that attempt counts (it may have been sent), so
   * the back-off keeps growing.
   */
  claimDue(now: number, leaseMs: number, owner: string, limit: number): Promise<readonly WebhookDelivery[]>;
  /**
   * Before an attempt is sent: gives the delivery the status and next attempt it comes to if
   * the attempt's outcome is never recorded (`failed` when this is its last attempt, which a
   * listing shows until finishAttempt replaces it with the outcome). False when `owner` no
   * longer holds the lease.
   */
  holdAttempt(delivery: WebhookDelivery, owner: string, fallback: Pick<AttemptOutcome, 'status' | 'nextAttemptAt' | 'at'>): Promise<boolean>;
  /** Records an attempt's outcome if `owner` still holds the lease; false when it lost it. */
  finishAttempt(delivery: WebhookDelivery, owner: string, outcome: AttemptOutcome, countsAsAttempt?: boolean): Promise<boolean>;
  /**
   * Tracks an endpoint's run of failures: a success ends it; a failure starts it or, once it
   * has lasted `disableAfterMs`, disables the endpoint with the reason. Returns the endpoint's
   * disabled reason when this call disabled it.
   */
  recordEndpointOutcome(accountId: string, id: string, ok: boolean, at: number, disableAfterMs: number, lastProblem: string): Promise<string | undefined>;
}
