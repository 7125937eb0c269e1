/**
 * The outbox: which deliveries an alert change produces. Both commit executors (the SQLite
 * writer and the PostgreSQL commit) and the status change call these inside the transaction
 * that writes the alert, so a delivery exists exactly when its alert change committed.
 */
import type { AlertsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.js';
import type { AlertRow } from '../types.js';
import { ALERT_UPDATE, alertRowFrom, type RowValues } from '../commit-plan.js';
import { newId } from '../../util/ids.js';
import { filterMatches, severityRank } from './filters.js';
import type { DeliveryEvent, EndpointFilter } from './types.js';
import type { Severity } from '../../event/classification.js';

export type OutboxEndpoint = Pick<WebhookEndpointsTable, 'id' | 'min_severity' | 'alert_types' | 'kill_chains_only'>;

/** The columns an endpoint lookup in a commit reads. */
export const OUTBOX_ENDPOINT_COLUMNS = ['id', 'min_severity', 'alert_types', 'kill_chains_only'] as const;

export function endpointFilterOf(row: Pick<WebhookEndpointsTable, 'min_severity' | 'alert_types' | 'kill_chains_only'>): EndpointFilter {
  return { minSeverity: row.min_severity as Severity, alertTypes: JSON.parse(row.alert_types) as string[], killChainsOnly: Number(row.kill_chains_only) === 1 };
}

/** The row an update leaves: the stored row with the columns an update sets taken from the new one. */
function updatedAlert(previous: AlertsTable, next: AlertsTable): AlertsTable {
  const row = Object.assign({}, previous);
  for (const column of ALERT_UPDATE) Object.assign(row, { [column]: next[column] });
  return row;
}

const stageCount = (detailsJson: string): number => {
  const details = JSON.parse(detailsJson) as { stages?: unknown };
  return Array.isArray(details.stages) ? details.stages.length : 0;
};

/**
 * An update is worth a delivery when it escalates the alert: a higher severity, or more
 * kill-chain stages. Another sighting of the same alert is not.
 */
function isEscalation(previous: AlertsTable, next: AlertsTable): boolean {
  if (severityRank(next.severity) > severityRank(previous.severity)) return true;
  return next.details !== previous.details && stageCount(next.details) > stageCount(previous.details);
}

/** Whether any endpoint wants this alert at all (decides if the previous row is worth reading). */
const anyMatch = (endpoints: readonly OutboxEndpoint[], alert: Pick<AlertsTable, 'type' | 'severity'>): boolean =>
  endpoints.some((e) => filterMatches(endpointFilterOf(e), alert));

export function alertRowOf(row: AlertsTable): AlertRow {
  return {
    id: row.id,
    accountId: row.account_id,
    type: row.type,
    severity: row.severity,
    subject: row.subject,
    status: row.status as AlertRow['status'],
    count: Number(row.count),
    firstSeen: Number(row.first_seen),
    lastSeen: Number(row.last_seen),
    actorId: row.actor_id,
    eventIds: JSON.parse(row.event_ids) as string[],
    details: JSON.parse(row.details) as Record<string, unknown>,
    assignee: row.assignee ?? null,
  };
}

/** One pending delivery per matching endpoint, due at once. */
export function outboxRows(endpoints: readonly OutboxEndpoint[], event: DeliveryEvent, alert: AlertsTable, at: number): WebhookDeliveriesTable[] {
  const matching = endpoints.filter((e) => filterMatches(endpointFilterOf(e), alert));
  if (matching.length === 0) return [];
  const snapshot = JSON.stringify(alertRowOf(alert));
  return matching.map((e) => pendingDelivery(alert.account_id, e.id, alert.id, event, snapshot, at));
}

export function pendingDelivery(
  accountId: string,
  endpointId: string,
  alertId: string | null,
  event: DeliveryEvent,
  snapshot: string,
  at: number,
): WebhookDeliveriesTable {
  return {
    id: newId('whd', at),
    account_id: accountId,
    endpoint_id: endpointId,
    alert_id: alertId,
    event,
    alert: snapshot,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    lease_until: 0,
    lease_owner: null,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    created_at: at,
    finished_at: null,
  };
}

/** Column order of the delivery insert (the SQLite writer binds positionally). */
export const DELIVERY_COLUMNS = [
  'id',
  'account_id',
  'endpoint_id',
  'alert_id',
  'event',
  'alert',
  'status',
  'attempts',
  'next_attempt_at',
  'lease_until',
  'lease_owner',
  'last_attempt_at',
  'last_status',
  'last_error',
  'created_at',
  'finished_at',
] as const satisfies readonly (keyof WebhookDeliveriesTable)[];

/** What the outbox rule reads inside a commit's transaction. */
export interface OutboxReads {
  /** The account's enabled endpoints. */
  endpoints(accountId: string): readonly OutboxEndpoint[];
  /** The alert's row as stored before this write. */
  current(accountId: string, id: string): AlertsTable | undefined;
}

/**
 * The deliveries one alert write of a commit produces, decided before the write: an opened
 * alert goes to every endpoint whose filter matches it; an update does only when it escalates
 * the stored row it replaces. Accounts without enabled endpoints cost the endpoint read alone.
 */
export function alertWriteOutbox(write: { readonly opened: boolean; readonly row: RowValues }, at: number, reads: OutboxReads): WebhookDeliveriesTable[] {
  const endpoints = reads.endpoints(write.row[1] as string);
  if (endpoints.length === 0) return [];
  const row = alertRowFrom(write.row);
  if (write.opened) return outboxRows(endpoints, 'alert.opened', row, at);
  if (!anyMatch(endpoints, row)) return [];
  const previous = reads.current(row.account_id, row.id);
  if (previous === undefined) return [];
  const next = updatedAlert(previous, row);
  return isEscalation(previous, next) ? outboxRows(endpoints, 'alert.escalated', next, at) : [];
}
