/**
 * Delivery bodies: Vigil's own JSON, an OCSF 1.1 Detection Finding (class 2004), or a message
 * Slack's incoming webhooks (and compatible chat tools) post as is.
 */
import { ALERT_TYPES } from '../detection/specs.js';
import { alertView } from '../storage/alert-view.js';
import type { AlertRow } from '../storage/types.js';
import type { DeliveryEvent, WebhookFormat } from '../storage/webhooks/types.js';

/** What a body is made from: the delivery and the alert as it was when the change committed. */
export interface DeliveryContent {
  readonly id: string;
  readonly accountId: string;
  readonly event: DeliveryEvent;
  readonly createdAt: number;
  readonly alert: AlertRow;
}

const SPECS = new Map(ALERT_TYPES.map((a) => [a.type, a]));

export const OCSF_VERSION = '1.1.0';
const OCSF_SEVERITY: Readonly<Record<string, { id: number; name: string }>> = {
  low: { id: 2, name: 'Low' },
  medium: { id: 3, name: 'Medium' },
  high: { id: 4, name: 'High' },
  critical: { id: 5, name: 'Critical' },
};
/** Finding status: New, In Progress, Suppressed, Resolved. */
const OCSF_STATUS: Readonly<Record<string, { id: number; name: string }>> = {
  open: { id: 1, name: 'New' },
  acknowledged: { id: 2, name: 'In Progress' },
  false_positive: { id: 3, name: 'Suppressed' },
  resolved: { id: 4, name: 'Resolved' },
};
const OCSF_ACTIVITY = { create: { id: 1, name: 'Create' }, update: { id: 2, name: 'Update' }, close: { id: 3, name: 'Close' } } as const;

function activityOf(content: DeliveryContent): { id: number; name: string } {
  if (content.event === 'alert.opened' || content.event === 'webhook.test') return OCSF_ACTIVITY.create;
  if (content.event === 'alert.status_changed' && (content.alert.status === 'resolved' || content.alert.status === 'false_positive'))
    return OCSF_ACTIVITY.close;
  return OCSF_ACTIVITY.update;
}

const titleOf = (alert: AlertRow): string => `${alert.type.replace(/_/g, ' ')}: ${alert.subject}`;

export function vigilBody(content: DeliveryContent): Record<string, unknown> {
  return {
    id: content.id,
    type: content.event,
    timestamp: new Date(content.createdAt).toISOString(),
    account_id: content.accountId,
    data: { alert: alertView(content.alert) },
  };
}

export function ocsfBody(content: DeliveryContent): Record<string, unknown> {
  const { alert } = content;
  const spec = SPECS.get(alert.type);
  const activity = activityOf(content);
  const severity = OCSF_SEVERITY[alert.severity] ?? { id: 0, name: 'Unknown' };
  const status = OCSF_STATUS[alert.status] ?? { id: 99, name: 'Other' };
  const attacks = (spec?.mitre ?? []).map((uid) => {
    const technique = uid.split('.')[0] as string;
    return uid === technique ? { technique: { uid } } : { technique: { uid: technique }, sub_technique: { uid } };
  });
  return {
    class_uid: 2004,
    class_name: 'Detection Finding',
    category_uid: 2,
    category_name: 'Findings',
    activity_id: activity.id,
    activity_name: activity.name,
    type_uid: 2004 * 100 + activity.id,
    type_name: `Detection Finding: ${activity.name}`,
    time: content.createdAt,
    severity_id: severity.id,
    severity: severity.name,
    status_id: status.id,
    status: status.name,
    message: spec?.description ?? titleOf(alert),
    count: alert.count,
    start_time: alert.firstSeen,
    end_time: alert.lastSeen,
    finding_info: {
      uid: alert.id,
      title: titleOf(alert),
      ...(spec ? { desc: spec.description } : {}),
      types: [alert.type],
      first_seen_time: alert.firstSeen,
      last_seen_time: alert.lastSeen,
      analytic: { uid: alert.type, name: spec?.detector ?? alert.type, type_id: 1, type: 'Rule' },
      ...(attacks.length > 0 ? { attacks } : {}),
      related_events: alert.eventIds.map((uid) => ({ uid })),
    },
    metadata: {
      version: OCSF_VERSION,
      uid: content.id,
      tenant_uid: content.accountId,
      product: { name: 'Vigil', vendor_name: 'Vigil' },
    },
    ...(alert.actorId !== null ? { actor: { user: { uid: alert.actorId } } } : {}),
    unmapped: { vigil_event: content.event, subject: alert.subject, details: alert.details },
  };
}

/** Slack's mrkdwn treats these three as markup. */
const mrkdwn = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const HEADLINE: Readonly<Record<DeliveryEvent, string>> = {
  'alert.opened': 'opened',
  'alert.escalated': 'escalated',
  'alert.status_changed': 'changed status',
  'webhook.test': 'test delivery',
};

export function slackBody(content: DeliveryContent): Record<string, unknown> {
  const { alert } = content;
  const severity = alert.severity.toUpperCase();
  const text = `[${severity}] ${titleOf(alert)} (${HEADLINE[content.event]})`;
  const lines = [
    `*${mrkdwn(severity)}* alert \`${mrkdwn(alert.type)}\` ${HEADLINE[content.event]}`,
    `*Subject:* ${mrkdwn(alert.subject)}`,
    `*Status:* ${alert.status}   *Sightings:* ${alert.count}`,
    ...(SPECS.get(alert.type) ? [mrkdwn(SPECS.get(alert.type)?.description ?? '')] : []),
  ];
  return {
    text: mrkdwn(text),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: `${alert.id} · first seen ${new Date(alert.firstSeen).toISOString()} · last seen ${new Date(alert.lastSeen).toISOString()}` },
        ],
      },
    ],
  };
}

export function deliveryBody(format: WebhookFormat, content: DeliveryContent): string {
  switch (format) {
    case 'ocsf':
      return JSON.stringify(ocsfBody(content));
    case 'slack':
      return JSON.stringify(slackBody(content));
    case 'vigil':
      return JSON.stringify(vigilBody(content));
  }
}
