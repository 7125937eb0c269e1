import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, parsePlans } from '../../src/limits/plans.js';
import { pruneOnce } from '../../src/ops/retention.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { Store } from '../../src/storage/store.js';
import type { AuditEntry, EventRow } from '../../src/storage/types.js';
import { alertRow, idempotencyOf } from '../contract/store-fixtures.js';
import { adminPool, describePostgres, dropSchema, openTestStore } from '../storage/pg-helpers.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15);

function event(id: string, accountId: string, receivedAt: number): EventRow {
  return {
    id,
    accountId,
    type: 'auth.login.success',
    eventId: null,
    occurredAt: receivedAt,
    receivedAt,
    actorId: 'u',
    ip: null,
    riskScore: 0,
    tags: [],
    doc: {},
  };
}

function entry(id: string, accountId: string, at: number): AuditEntry {
  return {
    id,
    accountId,
    at,
    actor: { kind: 'system', id: null, label: 'vigil' },
    ip: null,
    userAgent: null,
    action: 'settings.changed',
    targetKind: null,
    targetId: null,
    changes: {},
    details: {},
  };
}

describe('retention', () => {
  it('keeps each account its plan days of events and idempotency keys 7 days', async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    await store.accounts.createAccount({ id: 'acc_free', name: 'f', plan: 'free', createdAt: 0 });
    await store.accounts.createAccount({ id: 'acc_pro', name: 'p', plan: 'pro', createdAt: 0 });
    await store.commit({
      events: [
        event('evt_1', 'acc_free', NOW - 8 * DAY),
        event('evt_2', 'acc_free', NOW - 6 * DAY),
        event('evt_3', 'acc_pro', NOW - 8 * DAY),
        event('evt_4', 'acc_pro', NOW - 91 * DAY),
        event('evt_5', 'acc_pro', NOW - 400 * DAY),
      ],
      alerts: [],
      usage: [],
      idempotency: [
        { accountId: 'acc_pro', eventId: 'old', response: {}, createdAt: NOW - 8 * DAY, payloadDigest: null },
        { accountId: 'acc_pro', eventId: 'new', response: {}, createdAt: NOW - 6 * DAY, payloadDigest: null },
      ],
    });
    const report = await pruneOnce(store, DEFAULT_PLANS, NOW);
    expect(report.rowsDeleted).toBe(3);
    expect(report.idempotencyDeleted).toBe(1);
    expect((await store.events.listEvents('acc_free', {}, 10)).items.map((e) => e.id)).toEqual(['evt_2']);
    expect((await store.events.listEvents('acc_pro', {}, 10)).items.map((e) => e.id)).toEqual(['evt_3']);
    expect(await idempotencyOf(store, 'acc_pro', 'new', 0)).toBeDefined();
    expect(await idempotencyOf(store, 'acc_pro', 'old', 0)).toBeUndefined();
    await store.close();
  });

  it('deletes more old events than one retention transaction holds, and serves requests meanwhile', async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    await store.accounts.createAccount({ id: 'acc_free', name: 'f', plan: 'free', createdAt: 0 });
    const old = Array.from({ length: 4_500 }, (_, i) => event(`evt_old_${i}`, 'acc_free', NOW - 8 * DAY - i));
    await store.commit({ events: [...old, event('evt_new', 'acc_free', NOW - DAY)], alerts: [], usage: [], idempotency: [] });
    // A timer due at once fires while the pass runs: the pass gives the event loop a turn between transactions.
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const report = await pruneOnce(store, DEFAULT_PLANS, NOW);
    clearInterval(ticking);
    expect(report.rowsDeleted).toBe(4_500);
    expect(turns).toBeGreaterThan(0);
    expect(await store.events.countEvents('acc_free')).toBe(1);
    await store.close();
  });
});

describe('retention of webhook deliveries', () => {
  it('deletes delivered and failed deliveries finished 30 days ago; pending ones stay whatever their age', async () => {
    const { pendingDelivery } = await import('../../src/storage/webhooks/outbox.js');
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    const row = (id: string, status: string, finishedAt: number | null) => ({
      ...pendingDelivery('acc_pro', 'whk_1', null, 'webhook.test', '{}', NOW - 60 * DAY),
      id,
      status,
      finished_at: finishedAt,
    });
    await store.webhooks.insertDelivery(row('whd_old_delivered', 'delivered', NOW - 31 * DAY));
    await store.webhooks.insertDelivery(row('whd_old_failed', 'failed', NOW - 31 * DAY));
    await store.webhooks.insertDelivery(row('whd_recent', 'delivered', NOW - 29 * DAY));
    await store.webhooks.insertDelivery(row('whd_pending', 'pending', null));
    const report = await pruneOnce(store, DEFAULT_PLANS, NOW);
    expect(report.deliveriesDeleted).toBe(2);
    expect((await store.webhooks.listDeliveries('acc_pro', 'whk_1', 10)).items.map((d) => d.id).sort()).toEqual(['whd_pending', 'whd_recent']);
    await store.close();
  });
});

/**
 * Each account keeps its plan's `retention_days` from the plans file: a plan without the field
 * keeps the least (7 days), an account whose plan the file no longer has keeps the longest of
 * any plan, and the whole-partition pass spares what the longest retention of any plan keeps.
 */
function retentionFollowsThePlansFile(open: () => Promise<{ store: Store; close(): Promise<void> }>): void {
  it('keeps each account its plan’s retention_days', async () => {
    const { store, close } = await open();
    try {
      const limits = { rpm: 100, eps: 10, batch_max: 10, monthly_cap: 1_000 };
      const plans = parsePlans(
        JSON.stringify({
          plans: {
            short: Object.assign({ retention_days: 3 }, limits),
            unstated: limits,
            archive: Object.assign({ retention_days: 500 }, limits),
            free: { retention_days: 2 },
          },
        }),
      );
      for (const [id, plan] of [
        ['acc_short', 'short'],
        ['acc_unstated', 'unstated'],
        ['acc_archive', 'archive'],
        ['acc_retired', 'retired'],
      ] as const)
        await store.accounts.createAccount({ id, name: id, plan, createdAt: 0 });
      await store.commit({
        events: [
          event('evt_short_old', 'acc_short', NOW - 4 * DAY),
          event('evt_short_new', 'acc_short', NOW - 2 * DAY),
          event('evt_unstated_old', 'acc_unstated', NOW - 8 * DAY),
          event('evt_unstated_new', 'acc_unstated', NOW - 6 * DAY),
          event('evt_archive_old', 'acc_archive', NOW - 501 * DAY),
          event('evt_archive_new', 'acc_archive', NOW - 400 * DAY),
          event('evt_retired_ancient', 'acc_retired', NOW - 501 * DAY),
          event('evt_retired_old', 'acc_retired', NOW - 400 * DAY),
          event('evt_retired_new', 'acc_retired', NOW - DAY),
        ],
        alerts: [],
        usage: [],
        idempotency: [],
      });
      // Audit entries follow the same days as events (ids sort by age, as the trail writes them).
      for (const [id, account, at] of [
        ['aud_1_short_old', 'acc_short', NOW - 4 * DAY],
        ['aud_2_short_new', 'acc_short', NOW - 2 * DAY],
        ['aud_1_archive_old', 'acc_archive', NOW - 501 * DAY],
        ['aud_2_archive_new', 'acc_archive', NOW - 400 * DAY],
        ['aud_1_retired_old', 'acc_retired', NOW - 400 * DAY],
        ['aud_1_none_ancient', '', NOW - 501 * DAY],
        ['aud_2_none_old', '', NOW - 400 * DAY],
      ] as const)
        await store.audit.append(entry(id, account, at));
      const report = await pruneOnce(store, plans, NOW);
      for (const account of ['short', 'unstated', 'archive'])
        expect((await store.events.listEvents(`acc_${account}`, {}, 10)).items.map((e) => e.id)).toEqual([`evt_${account}_new`]);
      expect((await store.events.listEvents('acc_retired', {}, 10)).items.map((e) => e.id).sort()).toEqual(['evt_retired_new', 'evt_retired_old']);
      expect(report.auditDeleted).toBe(3);
      for (const [account, kept] of [
        ['acc_short', ['aud_2_short_new']],
        ['acc_archive', ['aud_2_archive_new']],
        ['acc_retired', ['aud_1_retired_old']],
        ['', ['aud_2_none_old']],
      ] as const)
        expect((await store.audit.list(account, {}, 10)).items.map((e) => e.id)).toEqual(kept);
    } finally {
      await close();
    }
  });
}

describe('retention follows the plans file (SQLite)', () => {
  retentionFollowsThePlansFile(async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    return { store, close: () => store.close() };
  });
});

describePostgres('retention follows the plans file (PostgreSQL)', () => {
  retentionFollowsThePlansFile(async () => {
    const { store, schema } = await openTestStore();
    return {
      store,
      async close() {
        await store.close();
        const admin = adminPool();
        await dropSchema(admin, schema).finally(() => admin.end());
      },
    };
  });
});

/**
 * Each account may keep each kind of data (events, alerts with their notes, audit entries) fewer
 * days than its plan keeps; a setting above the plan (the plan changed since) keeps the plan's.
 */
function retentionPerClass(open: () => Promise<{ store: Store; close(): Promise<void> }>): void {
  it('keeps each kind of data the days the account chose, within its plan', async () => {
    const { store, close } = await open();
    try {
      await store.accounts.createAccount({ id: 'acc_own', name: 'own', plan: 'pro', createdAt: 0 });
      await store.accounts.updateAccount('acc_own', { settings: { retention: { events_days: 10, alerts_days: 20, audit_days: 400 } } });
      await store.accounts.createAccount({ id: 'acc_plan', name: 'plan', plan: 'pro', createdAt: 0 });
      const alert = (id: string, accountId: string, days: number) => ({
        alert: alertRow(accountId, { id, firstSeen: NOW - days * DAY, lastSeen: NOW - days * DAY }),
        opened: true,
      });
      await store.commit({
        events: [
          event('evt_own_old', 'acc_own', NOW - 11 * DAY),
          event('evt_own_new', 'acc_own', NOW - 9 * DAY),
          event('evt_plan_11', 'acc_plan', NOW - 11 * DAY),
        ],
        alerts: [
          alert('alr_own_old', 'acc_own', 21),
          alert('alr_own_new', 'acc_own', 19),
          alert('alr_plan_21', 'acc_plan', 21),
          alert('alr_plan_91', 'acc_plan', 91),
        ],
        usage: [],
        idempotency: [],
      });
      await store.alerts.addAlertNote({
        id: 'note_old',
        accountId: 'acc_own',
        alertId: 'alr_own_old',
        status: 'open',
        note: 'looked',
        createdAt: NOW - 21 * DAY,
        author: null,
      });
      for (const [id, account, at] of [
        ['aud_1_own_old', 'acc_own', NOW - 91 * DAY],
        ['aud_2_own_new', 'acc_own', NOW - 89 * DAY],
      ] as const)
        await store.audit.append(entry(id, account, at));
      const report = await pruneOnce(store, DEFAULT_PLANS, NOW);
      expect((await store.events.listEvents('acc_own', {}, 10)).items.map((e) => e.id)).toEqual(['evt_own_new']);
      expect((await store.events.listEvents('acc_plan', {}, 10)).items.map((e) => e.id)).toEqual(['evt_plan_11']);
      expect((await store.alerts.listAlerts('acc_own', {}, 10)).items.map((a) => a.id)).toEqual(['alr_own_new']);
      expect((await store.alerts.listAlerts('acc_plan', {}, 10)).items.map((a) => a.id)).toEqual(['alr_plan_21']);
      expect(await store.alerts.listAlertNotes('acc_own', 'alr_own_old')).toEqual([]);
      // 400 audit days on a 90-day plan keep 90.
      expect((await store.audit.list('acc_own', {}, 10)).items.map((e) => e.id)).toEqual(['aud_2_own_new']);
      expect(report.alertsDeleted).toBe(2);
    } finally {
      await close();
    }
  });
}

describe('retention per kind of data (SQLite)', () => {
  retentionPerClass(async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    return { store, close: () => store.close() };
  });
});

describePostgres('retention per kind of data (PostgreSQL)', () => {
  retentionPerClass(async () => {
    const { store, schema } = await openTestStore();
    return {
      store,
      async close() {
        await store.close();
        const admin = adminPool();
        await dropSchema(admin, schema).finally(() => admin.end());
      },
    };
  });
});
