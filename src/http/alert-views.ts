import { alertView } from '../storage/alert-view.js';
import type { MemberStore } from '../storage/store.js';
import type { AlertRow } from '../storage/types.js';

/** The member an alert is assigned to; email and name are null if the person no longer exists. */
export interface AssigneeView {
  readonly id: string;
  readonly email: string | null;
  readonly name: string | null;
}

/**
 * Alerts as the API shows them, each with the member it is assigned to: one user read per
 * distinct assignee of the page, not per alert.
 */
export async function alertViewsWithAssignees(members: Pick<MemberStore, 'getUser'>, alerts: readonly AlertRow[]) {
  const ids = [...new Set(alerts.flatMap((a) => (a.assignee ? [a.assignee] : [])))];
  const users = new Map(await Promise.all(ids.map(async (id) => [id, await members.getUser(id)] as const)));
  return alerts.map((a) => {
    const user = a.assignee ? users.get(a.assignee) : undefined;
    const assignee: AssigneeView | null = a.assignee ? { id: a.assignee, email: user?.email ?? null, name: user?.name ?? null } : null;
    return { ...alertView(a), assignee };
  });
}

/** One alert as the API shows it, with its assignee. */
export async function alertViewWithAssignee(members: Pick<MemberStore, 'getUser'>, alert: AlertRow) {
  const [view] = await alertViewsWithAssignees(members, [alert]);
  return view as NonNullable<typeof view>;
}
