import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { RETENTION_DAYS, runRetention } from '../../src/storage/retention.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { Store } from '../../src/storage/store.js';
import { batch, DAY, eventRow, idempotency, T0 } from '../contract/store-fixtures.js';
import { adminPool, describePostgres, dropSchema, openTestStore } from './pg-helpers.js';

const NOW = Date.UTC(2026, 6, 15);

/** Events at these ages (days) for each account; returns which survive per account. */
async function scenario(store: Store) {
  const plans = { acc_free: 'free', acc_pro: 'pro', acc_odd: 'custom-plan' } as const;
  for (const [id, plan] of Object.entries(plans)) await store.createAccount({ id, name: id, plan, createdAt: T0 });
  const ages = [1, 6, 8, 29, 31, 89, 91, 200, 364, 366, 500];
  const rows = Object.keys(plans).flatMap((accountId) => ages.map((age) => eventRow(accountId, { receivedAt: NOW - age * DAY })));
  await store.commit(batch({ events: rows, idempotency: [idempotency('acc_free', 'old', NOW - 8 * DAY), idempotency('acc_free', 'new', NOW - DAY)] }));
  const report = await runRetention(store, NOW);
  const surviving = async (accountId: string) => {
    const out: number[] = [];
    for (const row of rows.filter((r) => r.accountId === accountId)) {
      if (await store.getEvent(accountId, row.id)) out.push(Math.round((NOW - row.receivedAt) / DAY));
    }
    return out;
  };
  return {
    report,
    free: await surviving('acc_free'),
    pro: await surviving('acc_pro'),
    odd: await surviving('acc_odd'),
    idempotencyOld: await store.findIdempotency('acc_free', 'old', 0),
    idempotencyNew: await store.findIdempotency('acc_free', 'new', 0),
  };
}

function expectPlanRetention(result: Awaited<ReturnType<typeof scenario>>): void {
  expect(RETENTION_DAYS.free).toBe(7);
  expect(result.free).toEqual([1, 6]);
  expect(result.pro).toEqual([1, 6, 8, 29, 31, 89]);
  // An unknown plan keeps the longest retention (365 days), never less.
  expect(result.odd).toEqual([1, 6, 8, 29, 31, 89, 91, 200, 364]);
  expect(result.idempotencyOld).toBeUndefined();
  expect(result.idempotencyNew).toBeDefined();
  expect(result.report.idempotencyDeleted).toBe(1);
}

describe('retention on SQLite', () => {
  it('keeps each account’s plan window and removes the rest', async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    try {
      const result = await scenario(store);
      expectPlanRetention(result);
      expect(result.report).toEqual({ partitionsDropped: 0, eventsDeleted: 6 + 7 + 3, idempotencyDeleted: 1 });
    } finally {
      await store.close();
    }
  });

  it('does nothing without accounts', async () => {
    const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
    await store.migrate();
    expect(await runRetention(store, NOW)).toEqual({ partitionsDropped: 0, eventsDeleted: 0, idempotencyDeleted: 0 });
    await store.close();
  });
});

describePostgres('retention on PostgreSQL', () => {
  let admin: pg.Pool;
  beforeAll(() => {
    admin = adminPool();
  });
  afterAll(async () => {
    await admin.end();
  });

  it('drops whole partitions past the longest retention and prunes shorter plans by row', async () => {
    const { store, schema } = await openTestStore();
    try {
      // Partitions for every month of the scenario, as a year of upkeep would have made them.
      for (let m = 0; m < 20; m++) await store.maintain(Date.UTC(2025, m - 2, 1));
      await store.maintain(NOW);
      const before = (await store.eventPartitions()).length;
      const result = await scenario(store);
      expectPlanRetention(result);
      expect(result.report.partitionsDropped).toBeGreaterThan(0);
      expect((await store.eventPartitions()).length).toBe(before - result.report.partitionsDropped);
      expect((await store.eventPartitions())[0]!.to).toBeGreaterThan(NOW - 365 * DAY);
    } finally {
      await store.close();
      await dropSchema(admin, schema);
    }
  });
});
