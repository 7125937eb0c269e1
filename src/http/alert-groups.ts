import { severityRank } from '../storage/webhooks/filters.js';
import type { AlertRow } from '../storage/types.js';
import { parseAddress, siteNetwork } from '../util/ip.js';

/**
 * Alert campaigns: the alerts of one type that share where they come from or what they are
 * about, shown and triaged as one row. The rule, applied per alert type to the alerts of the
 * window:
 *  - an alert's source is its address: the subject `ip:<address>`, else the `ip` of its
 *    details, else the address of its newest event;
 *  - alerts with a source are grouped by its network, the /24 (IPv4) or /64 (IPv6): a network
 *    whose alerts come from two or more addresses is one `network` group; a network with one
 *    address is one `source` group of that address;
 *  - alerts without a source are grouped by subject (`target`): the same type about the same
 *    actor, host or account.
 * Every alert is in exactly one group; a group may hold one alert.
 */
export type SharedBy = 'source' | 'network' | 'target';

export interface AlertGroup {
  readonly key: string;
  readonly type: string;
  readonly by: SharedBy;
  readonly value: string;
  /** Newest first. */
  readonly alerts: readonly AlertRow[];
}

/** A group's key: what it shares and its type, which select its alerts again for bulk triage. */
export const groupKey = (by: SharedBy, type: string, value: string): string => `${by}|${type}|${value}`;

export function parseGroupKey(key: string): { readonly by: SharedBy; readonly type: string; readonly value: string } | undefined {
  const first = key.indexOf('|');
  const second = first < 0 ? -1 : key.indexOf('|', first + 1);
  if (second < 0) return undefined;
  const by = key.slice(0, first);
  if (by !== 'source' && by !== 'network' && by !== 'target') return undefined;
  const type = key.slice(first + 1, second);
  const value = key.slice(second + 1);
  return type === '' || value === '' ? undefined : { by, type, value };
}

/** The event whose address stands for an alert's source when neither its subject nor its details name one. */
export const newestEventOf = (alert: AlertRow): string | undefined => alert.eventIds[alert.eventIds.length - 1];

/** An alert's source address (see the rule above), given its newest event's address. */
export function sourceOf(alert: AlertRow, eventAddress: string | undefined): string | undefined {
  if (alert.subject.startsWith('ip:')) return alert.subject.slice(3);
  const ip = alert.details.ip;
  if (typeof ip === 'string' && parseAddress(ip) !== undefined) return ip;
  return eventAddress;
}

/** The groups of these alerts (one type or many), each alert in one; newest group first. */
export function groupAlerts(alerts: readonly AlertRow[], source: (alert: AlertRow) => string | undefined): AlertGroup[] {
  const buckets = new Map<string, { type: string; kind: 'network' | 'target'; value: string; alerts: AlertRow[]; sources: Set<string> }>();
  for (const alert of alerts) {
    const from = source(alert);
    const network = from === undefined ? undefined : (siteNetwork(from) ?? from);
    const kind = network === undefined ? 'target' : 'network';
    const value = network ?? alert.subject;
    const id = `${kind}|${alert.type}|${value}`;
    let bucket = buckets.get(id);
    if (bucket === undefined) buckets.set(id, (bucket = { type: alert.type, kind, value, alerts: [], sources: new Set() }));
    bucket.alerts.push(alert);
    if (from !== undefined) bucket.sources.add(from);
  }
  const groups: AlertGroup[] = [];
  for (const b of buckets.values()) {
    const alertsNewestFirst = b.alerts.sort((x, y) => y.lastSeen - x.lastSeen || (x.id < y.id ? 1 : -1));
    if (b.kind === 'target') groups.push({ key: groupKey('target', b.type, b.value), type: b.type, by: 'target', value: b.value, alerts: alertsNewestFirst });
    else if (b.sources.size >= 2)
      groups.push({ key: groupKey('network', b.type, b.value), type: b.type, by: 'network', value: b.value, alerts: alertsNewestFirst });
    else {
      const only = [...b.sources][0] ?? b.value;
      groups.push({ key: groupKey('source', b.type, only), type: b.type, by: 'source', value: only, alerts: alertsNewestFirst });
    }
  }
  const lastSeen = (g: AlertGroup) => g.alerts[0]?.lastSeen ?? 0;
  return groups.sort((a, b) => lastSeen(b) - lastSeen(a) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Whether an alert belongs to the group a key names (by the same rule, whatever else the window holds). */
export function inGroup(key: { readonly by: SharedBy; readonly type: string; readonly value: string }, alert: AlertRow, from: string | undefined): boolean {
  if (alert.type !== key.type) return false;
  if (key.by === 'target') return from === undefined && alert.subject === key.value;
  if (from === undefined) return false;
  return key.by === 'source' ? from === key.value : (siteNetwork(from) ?? from) === key.value;
}

/** Subjects listed per group. */
const GROUP_SUBJECTS = 10;
/** Alert ids listed per group: as many as one bulk triage takes. */
export const GROUP_ALERT_IDS = 1_000;

/** A group as the API shows it. */
export function groupView(group: AlertGroup) {
  const statuses: Record<string, number> = {};
  const subjects: string[] = [];
  let severity = group.alerts[0]?.severity ?? 'low';
  let events = 0;
  let firstSeen = Infinity;
  for (const a of group.alerts) {
    statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    if (subjects.length < GROUP_SUBJECTS && !subjects.includes(a.subject)) subjects.push(a.subject);
    if (severityRank(a.severity) > severityRank(severity)) severity = a.severity;
    events += a.count;
    firstSeen = Math.min(firstSeen, a.firstSeen);
  }
  return {
    key: group.key,
    type: group.type,
    severity,
    count: group.alerts.length,
    events,
    first_seen: new Date(firstSeen).toISOString(),
    last_seen: new Date(group.alerts[0]?.lastSeen ?? firstSeen).toISOString(),
    shared: { by: group.by, value: group.value },
    subjects,
    statuses,
    alert_ids: group.alerts.slice(0, GROUP_ALERT_IDS).map((a) => a.id),
  };
}
