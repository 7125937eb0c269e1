import type { FastifyRequest } from 'fastify';
import { actorOf, type AuditTrail } from '../audit/trail.js';
import type { Store } from '../storage/store.js';
import type { AlertNote, AlertRow, AlertStatus } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';
import { auditOrigin } from './audit-origin.js';
import { requestAccount } from './context.js';
import { ApiError } from './errors.js';

/** What triage changes of alerts needs: the store, the time, the trail, and the detection state's hook. */
export interface TriageDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly audit: AuditTrail;
  /** An alert was resolved or marked a false positive: the next sighting must open a new one. */
  readonly alertClosed?: (accountId: string, type: string, subject: string) => Promise<void>;
}

/** A change an analyst makes to an alert: any of its status, its assignee (null: nobody), a note. */
export interface AlertChange {
  readonly status?: AlertStatus;
  readonly assignee?: string | null;
  readonly note?: string;
}

export const badAssignee = (message: string) => new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field: 'assignee', message }] });

/** Refuses an assignee who is not a member of the account; checked before anything is written, so a refused change changes nothing. */
export async function checkAssignee(store: Store, accountId: string, assignee: string | null | undefined): Promise<void> {
  if (assignee === undefined || assignee === null) return;
  if (assignee.startsWith('usr_') && (await store.members.getMember(accountId, assignee))) return;
  throw badAssignee(`assignee must be the id (usr_…) of a member of this account, or null; ${assignee} is not one.`);
}

/** Stores a note on an alert, with the status it was written with and its author, and its audit entry. */
export async function addAlertNote(deps: TriageDeps, request: FastifyRequest, alertId: string, status: AlertStatus, text: string): Promise<AlertNote> {
  const now = deps.clock.now();
  const note: AlertNote = {
    id: newId('not', now),
    accountId: requestAccount(request).account.id,
    alertId,
    status,
    note: text,
    createdAt: now,
    author: actorOf(requestAccount(request).principal),
  };
  await deps.store.alerts.addAlertNote(note);
  await deps.audit.record(auditOrigin(request), {
    action: 'alert.note_added',
    target: { kind: 'alert', id: alertId },
    details: { note_id: note.id, status: note.status, note: note.note },
  });
  return note;
}

/**
 * Applies a change to one alert of the request's account, as `PATCH /v1/alerts/{id}` and the bulk
 * triage do: a status change writes its webhook deliveries with it (in the store) and, closing
 * the alert, forgets its detection state; each field that changes writes one audit entry. The
 * assignee must have passed checkAssignee. Undefined when the alert is gone; `changed` is false
 * when every value was already set and no note was added.
 */
export async function triageAlert(
  deps: TriageDeps,
  request: FastifyRequest,
  before: AlertRow,
  change: AlertChange,
): Promise<{ readonly alert: AlertRow; readonly changed: boolean } | undefined> {
  const accountId = before.accountId;
  const origin = auditOrigin(request);
  const target = { kind: 'alert', id: before.id };
  let alert: AlertRow = before;
  let changed = false;
  if (change.status !== undefined) {
    const updated = await deps.store.alerts.setAlertStatus(accountId, before.id, change.status, deps.clock.now());
    if (!updated) return undefined;
    alert = updated;
    if (alert.status === 'resolved' || alert.status === 'false_positive') await deps.alertClosed?.(accountId, alert.type, alert.subject);
    if (alert.status !== before.status) {
      changed = true;
      await deps.audit.record(origin, { action: 'alert.status_changed', target, changes: { status: { before: before.status, after: alert.status } } });
    }
  }
  if (change.assignee !== undefined) {
    const previous = alert.assignee ?? null;
    const assigned = await deps.store.alerts.assignAlert(accountId, before.id, change.assignee);
    if (!assigned) return undefined;
    alert = assigned;
    if ((alert.assignee ?? null) !== previous) {
      changed = true;
      await deps.audit.record(origin, { action: 'alert.assigned', target, changes: { assignee: { before: previous, after: alert.assignee ?? null } } });
    }
  }
  if (change.note !== undefined) {
    await addAlertNote(deps, request, alert.id, alert.status, change.note);
    changed = true;
  }
  return { alert, changed };
}
