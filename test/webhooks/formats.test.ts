import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { ALERT_TYPES } from '../../src/detection/specs.js';
import type { AlertRow } from '../../src/storage/types.js';
import { deliveryBody, ocsfBody, slackBody, type DeliveryContent } from '../../src/webhooks/formats.js';
import type { DeliveryEvent } from '../../src/storage/webhooks/types.js';

const schema = JSON.parse(readFileSync(new URL('./ocsf-detection-finding.schema.json', import.meta.url), 'utf8')) as object;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

const T = Date.UTC(2026, 0, 15, 12, 0, 0);
const alert = (type: string, severity: string, status: AlertRow['status'] = 'open', actorId: string | null = 'user-42'): AlertRow => ({
  id: 'alr_01KAZ0000000000000000000AB',
  accountId: 'acc_1',
  type,
  severity,
  subject: 'user-42',
  status,
  count: 3,
  firstSeen: T - 60_000,
  lastSeen: T,
  actorId,
  eventIds: ['evt_1', 'evt_2', 'evt_3'],
  details: { failures: 12 },
});
const content = (a: AlertRow, event: DeliveryEvent): DeliveryContent => ({
  id: 'whd_01KAZ000000000000000000000',
  accountId: 'acc_1',
  event,
  createdAt: T,
  alert: a,
});

describe('OCSF Detection Finding output', () => {
  it('validates against the class schema for every alert type, event and status', () => {
    const events: DeliveryEvent[] = ['alert.opened', 'alert.escalated', 'alert.status_changed', 'webhook.test'];
    const statuses: AlertRow['status'][] = ['open', 'acknowledged', 'resolved', 'false_positive'];
    let checked = 0;
    for (const spec of ALERT_TYPES)
      for (const event of events)
        for (const status of statuses) {
          const body = ocsfBody(content(alert(spec.type, spec.severity, status, checked % 2 ? null : 'user-42'), event));
          expect(validate(body) ? [] : validate.errors).toEqual([]);
          checked++;
        }
    expect(checked).toBe(ALERT_TYPES.length * 16);
  });

  it('maps activity, severity, status and the MITRE techniques', () => {
    const opened = ocsfBody(content(alert('auth.mfa_disabled', 'high'), 'alert.opened')) as any;
    expect(opened).toMatchObject({ class_uid: 2004, category_uid: 2, activity_id: 1, type_uid: 200401, severity_id: 4, status_id: 1, time: T, count: 3 });
    expect(opened.finding_info).toMatchObject({
      uid: 'alr_01KAZ0000000000000000000AB',
      types: ['auth.mfa_disabled'],
      first_seen_time: T - 60_000,
      last_seen_time: T,
    });
    expect(opened.finding_info.attacks).toEqual([{ technique: { uid: 'T1556' }, sub_technique: { uid: 'T1556.006' } }]);
    expect(opened.metadata).toMatchObject({ version: '1.1.0', uid: 'whd_01KAZ000000000000000000000', product: { vendor_name: 'Vigil' } });
    const closed = ocsfBody(content(alert('auth.mfa_disabled', 'high', 'resolved'), 'alert.status_changed')) as any;
    expect(closed).toMatchObject({ activity_id: 3, type_uid: 200403, status_id: 4 });
    const suppressed = ocsfBody(content(alert('auth.mfa_disabled', 'critical', 'false_positive'), 'alert.status_changed')) as any;
    expect(suppressed).toMatchObject({ activity_id: 3, severity_id: 5, status_id: 3 });
    const escalated = ocsfBody(content(alert('auth.mfa_disabled', 'critical'), 'alert.escalated')) as any;
    expect(escalated).toMatchObject({ activity_id: 2, type_uid: 200402 });
  });

  it('the schema is not a rubber stamp', () => {
    const body = ocsfBody(content(alert('auth.mfa_disabled', 'high'), 'alert.opened')) as Record<string, unknown>;
    for (const broken of [
      { ...body, class_uid: 2001 },
      { ...body, type_uid: 200402 },
      { ...body, finding_info: { uid: 'x' } },
      { ...body, severity_id: 7 },
      { ...body, extra: 1 },
    ])
      expect(validate(broken)).toBe(false);
    const { metadata: _metadata, ...withoutMetadata } = body;
    expect(validate(withoutMetadata)).toBe(false);
  });
});

describe('Slack and Vigil output', () => {
  it('Slack: a text fallback and mrkdwn blocks, with markup characters escaped', () => {
    const a = { ...alert('auth.mfa_disabled', 'high'), subject: '<script>&' };
    const body = slackBody(content(a, 'alert.opened')) as any;
    expect(body.text).toBe('[HIGH] auth.mfa disabled: &lt;script&gt;&amp; (opened)');
    expect(body.blocks[0]).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
    expect(body.blocks[0].text.text).toContain('*Subject:* &lt;script&gt;&amp;');
    expect(body.blocks[1].type).toBe('context');
  });

  it('Vigil: the alert as the read API shows it', () => {
    const body = JSON.parse(deliveryBody('vigil', content(alert('auth.mfa_disabled', 'high'), 'alert.escalated')));
    expect(body).toEqual({
      id: 'whd_01KAZ000000000000000000000',
      type: 'alert.escalated',
      timestamp: new Date(T).toISOString(),
      account_id: 'acc_1',
      data: {
        alert: {
          id: 'alr_01KAZ0000000000000000000AB',
          type: 'auth.mfa_disabled',
          severity: 'high',
          status: 'open',
          subject: 'user-42',
          actor_id: 'user-42',
          count: 3,
          first_seen: new Date(T - 60_000).toISOString(),
          last_seen: new Date(T).toISOString(),
          event_ids: ['evt_1', 'evt_2', 'evt_3'],
          details: { failures: 12 },
        },
      },
    });
  });
});
