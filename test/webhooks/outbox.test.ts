import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { Store } from '../../src/storage/store.js';
import type { AlertRow, AlertWrite, CommitBatch, EventRow } from '../../src/storage/types.js';
import { newId } from '../../src/util/ids.js';
import { describePostgres, openTestStore } from '../storage/pg-helpers.js';

const T = Date.UTC(2026, 0, 15, 12, 0, 0);

function event(accountId: string, at: number): EventRow {
  return {
    id: newId('evt', at),
    accountId,
    type: 'auth.mfa.disabled',
    eventId: null,
    occurredAt: at,
    receivedAt: at,
    actorId: 'u1',
    ip: null,
    riskScore: 0,
    tags: [],
    doc: {},
  };
}

const batch = (accountId: string, at: number, alerts: AlertWrite[]): CommitBatch => ({ events: [event(accountId, at)], alerts, usage: [], idempotency: [] });

function alertRow(accountId: string, id: string, patch: Partial<AlertRow> = {}): AlertRow {
  return {
    id,
    accountId,
    type: 'auth.mfa_disabled',
    severity: 'high',
    subject: 'u1',
    status: 'open',
    count: 1,
    firstSeen: T,
    lastSeen: T,
    actorId: 'u1',
    eventIds: ['evt_a'],
    details: {},
    ...patch,
  };
}

async function addEndpoint(store: Store, accountId: string, minSeverity = 'low'): Promise<string> {
  const id = newId('whk', T);
  await store.webhooks.createEndpoint({
    id,
    account_id: accountId,
    url: 'https://example.com/hook',
    description: '',
    format: 'vigil',
    min_severity: minSeverity,
    alert_types: '[]',
    kill_chains_only: 0,
    enabled: 1,
    disabled_reason: null,
    secret: 'whsec_x',
    previous_secret: null,
    previous_secret_until: null,
    failing_since: null,
    created_at: T,
    updated_at: T,
  });
  return id;
}

const events = async (store: Store, accountId: string, endpointId: string) =>
  (await store.webhooks.listDeliveries(accountId, endpointId, 100)).items.map((d) => `${d.event}:${String(d.alert.severity)}:${d.alert.status}`).reverse();

function outboxSuite(name: string, open: () => Promise<{ store: Store; close: () => Promise<void> }>): void {
  describe(`outbox in the commit transaction (${name})`, () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => close?.());

    it('opened, escalated and status changes produce deliveries; another sighting does not', async () => {
      const opened = await open();
      const { store } = opened;
      close = opened.close;
      const account = 'acc_outbox';
      const endpoint = await addEndpoint(store, account);
      const highOnly = await addEndpoint(store, account, 'critical');
      const id = newId('alr', T);
      await store.commit(batch(account, T, [{ opened: true, alert: alertRow(account, id) }]));
      await store.commit(batch(account, T + 1, [{ opened: false, alert: alertRow(account, id, { count: 2, lastSeen: T + 1 }) }]));
      await store.commit(batch(account, T + 2, [{ opened: false, alert: alertRow(account, id, { count: 3, severity: 'critical' }) }]));
      await store.commit(
        batch(account, T + 3, [{ opened: false, alert: alertRow(account, id, { count: 4, severity: 'critical', details: { stages: ['a'] } }) }]),
      );
      await store.commit(
        batch(account, T + 4, [{ opened: false, alert: alertRow(account, id, { count: 5, severity: 'critical', details: { stages: ['a', 'b'] } }) }]),
      );
      await store.alerts.setAlertStatus(account, id, 'resolved', T + 5);
      await store.alerts.setAlertStatus(account, id, 'resolved', T + 6);
      expect(await events(store, account, endpoint)).toEqual([
        'alert.opened:high:open',
        'alert.escalated:critical:open',
        'alert.escalated:critical:open',
        'alert.escalated:critical:open',
        'alert.status_changed:critical:resolved',
      ]);
      expect(await events(store, account, highOnly)).toEqual([
        'alert.escalated:critical:open',
        'alert.escalated:critical:open',
        'alert.escalated:critical:open',
        'alert.status_changed:critical:resolved',
      ]);
      const [first] = (await store.webhooks.listDeliveries(account, endpoint, 100)).items.slice(-1);
      expect(first).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: T, createdAt: T, alertId: id });
    });

    it('a commit that fails writes no delivery, and other accounts are untouched', async () => {
      const opened = await open();
      const { store } = opened;
      close = opened.close;
      const account = 'acc_atomic';
      const endpoint = await addEndpoint(store, account);
      const other = await addEndpoint(store, 'acc_other');
      const id = newId('alr', T);
      await store.commit(batch(account, T, [{ opened: true, alert: alertRow(account, id) }]));
      // The same alert opened twice: the insert fails, so the whole group (and its outbox row) does.
      await expect(
        store.commit(
          batch(account, T + 1, [
            { opened: true, alert: alertRow(account, newId('alr', T)) },
            { opened: true, alert: alertRow(account, id) },
          ]),
        ),
      ).rejects.toThrow();
      expect(await events(store, account, endpoint)).toEqual(['alert.opened:high:open']);
      expect(await events(store, 'acc_other', other)).toEqual([]);
      expect(await events(store, account, other)).toEqual([]);
    });
  });
}

outboxSuite('SQLite, in memory', async () => {
  const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  await store.migrate();
  return { store, close: () => store.close() };
});

outboxSuite('SQLite file, writer thread', async () => {
  const store = openSqliteStore({ dataDir: mkdtempSync(join(tmpdir(), 'vigil-outbox-')), synchronous: 'normal' });
  await store.migrate();
  return { store, close: () => store.close() };
});

describePostgres('PostgreSQL', () => {
  outboxSuite('PostgreSQL', async () => {
    const { store } = await openTestStore();
    return { store, close: () => store.close() };
  });
});
