import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/limits/plans.js';
import { pruneOnce } from '../../src/ops/retention.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { EventRow } from '../../src/storage/types.js';
import { idempotencyOf } from '../contract/store-fixtures.js';

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

describe('retention', () => {
  it('keeps each account its plan days of events and idempotency keys 7 days', async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    await store.createAccount({ id: 'acc_free', name: 'f', plan: 'free', createdAt: 0 });
    await store.createAccount({ id: 'acc_pro', name: 'p', plan: 'pro', createdAt: 0 });
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
    expect((await store.listEvents('acc_free', {}, 10)).items.map((e) => e.id)).toEqual(['evt_2']);
    expect((await store.listEvents('acc_pro', {}, 10)).items.map((e) => e.id)).toEqual(['evt_3']);
    expect(await idempotencyOf(store, 'acc_pro', 'new', 0)).toBeDefined();
    expect(await idempotencyOf(store, 'acc_pro', 'old', 0)).toBeUndefined();
    await store.close();
  });

  it('deletes more old events than one retention transaction holds, and serves requests meanwhile', async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    await store.createAccount({ id: 'acc_free', name: 'f', plan: 'free', createdAt: 0 });
    const old = Array.from({ length: 4_500 }, (_, i) => event(`evt_old_${i}`, 'acc_free', NOW - 8 * DAY - i));
    await store.commit({ events: [...old, event('evt_new', 'acc_free', NOW - DAY)], alerts: [], usage: [], idempotency: [] });
    // A timer due at once fires while the pass runs: the pass gives the event loop a turn between transactions.
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const report = await pruneOnce(store, DEFAULT_PLANS, NOW);
    clearInterval(ticking);
    expect(report.rowsDeleted).toBe(4_500);
    expect(turns).toBeGreaterThan(0);
    expect(await store.countEvents('acc_free')).toBe(1);
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
