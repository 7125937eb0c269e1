import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { PostgresStore } from '../../src/storage/postgres.js';
import type { EventFilter } from '../../src/storage/types.js';
import { batch, eventRow, T0 } from '../contract/store-fixtures.js';
import { connectionSettings, openPostgresStore } from '../../src/storage/postgres.js';
import { ManualClock } from '../../src/util/clock.js';
import { adminPool, describePostgres, dropSchema, freshSchema, openTestStore, PG_URL } from './pg-helpers.js';

/** PostgreSQL-only behaviour: month partitions and the indexes behind the read filters. */
describePostgres('PostgreSQL layout', () => {
  let admin: pg.Pool;
  let opened: { store: PostgresStore; schema: string } | undefined;
  const queries: { sql: string; parameters: readonly unknown[] }[] = [];
  beforeAll(() => {
    admin = adminPool();
  });
  afterEach(async () => {
    if (opened) {
      await opened.store.close();
      await dropSchema(admin, opened.schema);
      opened = undefined;
    }
  });
  afterAll(async () => {
    await admin.end();
  });
  async function open(): Promise<{ store: PostgresStore; schema: string }> {
    opened = await openTestStore({ onQuery: (q) => queries.push(q) });
    await opened.store.accounts.createAccount({ id: 'acc_a', name: 'a', plan: 'pro', createdAt: T0 });
    return opened;
  }
  /** Which table each of these events is physically stored in. */
  async function homes(schema: string, ids: readonly string[]): Promise<string[]> {
    const { rows } = await admin.query<{ id: string; home: string }>(`select id, tableoid::regclass::text as home from "${schema}".events where id = any($1)`, [
      ids,
    ]);
    const byId = new Map(rows.map((r) => [r.id, r.home.replace(`${schema}.`, '')]));
    return ids.map((id) => byId.get(id) ?? 'missing');
  }

  it('migrate creates the month of its clock and two months ahead, plus the default partition', async () => {
    const { store, schema } = await open();
    expect((await store.eventPartitions()).map((p) => p.name)).toEqual(['events_p202601', 'events_p202602', 'events_p202603']);
    const jan = await store.eventPartitions();
    expect(jan[0]).toEqual({ name: 'events_p202601', from: Date.UTC(2026, 0, 1), to: Date.UTC(2026, 1, 1) });
    const e1 = eventRow('acc_a', { receivedAt: Date.UTC(2026, 0, 31, 23, 59, 59, 999) });
    const e2 = eventRow('acc_a', { receivedAt: Date.UTC(2026, 1, 1) });
    const e3 = eventRow('acc_a', { receivedAt: Date.UTC(2026, 5, 1) });
    await store.commit(batch({ events: [e1, e2, e3] }));
    expect(await homes(schema, [e1.id, e2.id, e3.id])).toEqual(['events_p202601', 'events_p202602', 'events_default']);
  });

  it('maintain moves rows out of the default partition into the month it creates', async () => {
    const { store, schema } = await open();
    const june = Array.from({ length: 3 }, (_, i) => eventRow('acc_a', { receivedAt: Date.UTC(2026, 5, 10 + i) }));
    const sept = eventRow('acc_a', { receivedAt: Date.UTC(2026, 8, 2) });
    await store.commit(batch({ events: [...june, sept] }));
    await store.maintain(Date.UTC(2026, 4, 20));
    expect((await store.eventPartitions()).map((p) => p.name)).toEqual([
      'events_p202601',
      'events_p202602',
      'events_p202603',
      'events_p202605',
      'events_p202606',
      'events_p202607',
    ]);
    expect(await homes(schema, [...june.map((e) => e.id), sept.id])).toEqual(['events_p202606', 'events_p202606', 'events_p202606', 'events_default']);
    for (const e of june) expect(await store.events.getEvent('acc_a', e.id)).toEqual(e);
    // The moved partition is a full member: unique key and filters work on it.
    await expect(store.commit(batch({ events: [june[0]!] }))).rejects.toThrow();
    expect((await store.events.listEvents('acc_a', { actorId: 'user_1' }, 10)).items).toHaveLength(4);
  });

  it('maintain from many instances at once creates each partition once', async () => {
    const { store } = await open();
    const others = await Promise.all([0, 1, 2].map(() => openTestStore({ schema: opened!.schema })));
    try {
      await Promise.all([store, ...others.map((o) => o.store)].map((s) => s.maintain(Date.UTC(2026, 10, 5))));
      expect((await store.eventPartitions()).map((p) => p.name).slice(-3)).toEqual(['events_p202611', 'events_p202612', 'events_p202701']);
    } finally {
      for (const o of others) await o.store.close();
    }
  });

  it('instances migrating a new schema at the same moment all succeed', async () => {
    const schema = freshSchema();
    const stores = await Promise.all([0, 1, 2, 3].map(() => openPostgresStore(PG_URL, { schema, clock: new ManualClock(T0), poolSize: 2 })));
    try {
      await Promise.all(stores.map((s) => s.migrate()));
      await stores[0]!.accounts.createAccount({ id: 'acc_x', name: 'x', plan: 'free', createdAt: T0 });
      expect(await stores[3]!.accounts.countAccounts()).toBe(1);
    } finally {
      for (const s of stores) await s.close();
      await dropSchema(admin, schema);
    }
  });

  it('dropEventsBefore drops whole months and deletes only the rows left before the cut-off', async () => {
    const { store } = await open();
    const at = [Date.UTC(2026, 0, 3), Date.UTC(2026, 1, 27), Date.UTC(2026, 2, 1), Date.UTC(2026, 2, 20)];
    const rows = at.map((receivedAt) => eventRow('acc_a', { receivedAt }));
    const stray = eventRow('acc_a', { receivedAt: Date.UTC(2025, 6, 1) });
    await store.commit(batch({ events: [...rows, stray] }));
    expect(await store.events.dropEventsBefore(Date.UTC(2026, 2, 10))).toEqual({ partitionsDropped: 2, rowsDeleted: 2 });
    expect((await store.eventPartitions()).map((p) => p.name)).toEqual(['events_p202603']);
    expect((await store.events.listEvents('acc_a', {}, 10)).items.map((e) => e.id)).toEqual([rows[3]!.id]);
    expect(await store.events.dropEventsBefore(Date.UTC(2026, 2, 10))).toEqual({ partitionsDropped: 0, rowsDeleted: 0 });
  });

  it('takes the schema from the URL and keeps the session options the URL sets', async () => {
    const schema = freshSchema();
    const url = new URL(PG_URL);
    url.searchParams.set('schema', schema);
    url.searchParams.set('options', '-c work_mem=7MB');
    const store = openPostgresStore(url.toString(), { clock: new ManualClock(T0), applicationName: `vigil-${schema}`, statementTimeoutMs: 12_345 });
    try {
      await store.migrate();
      expect(await store.schema()).toBe(schema);
      await store.accounts.createAccount({ id: 'acc_url', name: 'u', plan: 'free', createdAt: T0 });
      const { rows } = await admin.query(`select id from "${schema}".accounts`);
      expect(rows).toEqual([{ id: 'acc_url' }]);
      // The pool connects with exactly these settings.
      const conn = connectionSettings(url.toString(), { statementTimeoutMs: 12_345 });
      const client = new pg.Client({ connectionString: conn.connectionString, ...(conn.startup ? { options: conn.startup } : {}) });
      await client.connect();
      try {
        const show = async (name: string) => (await client.query(`show ${name}`)).rows[0][name];
        expect([await show('work_mem'), await show('statement_timeout'), await show('search_path')]).toEqual(['7MB', '12345ms', schema]);
      } finally {
        await client.end();
      }
    } finally {
      await store.close();
      await dropSchema(admin, schema);
    }
  });

  it('returns bigint columns as numbers', async () => {
    const { store } = await open();
    const e = eventRow('acc_a', { occurredAt: 2 ** 52 + 1, receivedAt: T0 });
    await store.commit(batch({ events: [e], usage: [{ accountId: 'acc_a', period: '2026-01', day: '2026-01-15', used: 2 ** 40, dropped: 1 }] }));
    const read = await store.events.getEvent('acc_a', e.id);
    expect(read?.occurredAt).toBe(2 ** 52 + 1);
    expect(await store.events.countEvents('acc_a')).toBe(1);
    expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(2 ** 40);
    expect(await store.stats.dailyCounts('acc_a', 0)).toEqual([{ day: '2026-01-15', count: 2 ** 40 }]);
  });

  it('answers each selective read filter from its index', async () => {
    const { store, schema } = await open();
    const common = Array.from({ length: 6000 }, (_, i) =>
      eventRow('acc_a', { receivedAt: T0 + i, occurredAt: T0 - 10 * 86_400_000 + i * 1000, riskScore: i % 60, tags: ['common'] }),
    );
    const rare = Array.from({ length: 10 }, (_, i) =>
      eventRow('acc_a', {
        type: 'rare.thing.seen',
        actorId: 'rare_actor',
        ip: '192.0.2.99',
        riskScore: 99,
        receivedAt: T0 + 7000 + i,
        occurredAt: T0 + i,
        tags: ['rare'],
      }),
    );
    await store.commit(batch({ events: [...common, ...rare] }));
    await admin.query(`analyze "${schema}".events`);
    const cases: [EventFilter, RegExp][] = [
      [{ type: 'rare.thing.seen' }, /events_p202601_account_id_type_id_idx/],
      [{ typePrefix: 'rare.' }, /events_p202601_account_id_type_id_idx/],
      [{ actorId: 'rare_actor' }, /events_p202601_account_id_actor_id_id_idx/],
      [{ ip: '192.0.2.99' }, /events_p202601_account_id_ip_id_idx/],
      [{ minRisk: 90 }, /events_p202601_account_id_risk_score_id_idx/],
      [{ since: T0, until: T0 + 100 }, /events_p202601_account_id_occurred_at_id_idx/],
      [{ tag: 'rare' }, /events_p202601_tags_idx/],
    ];
    for (const [filter, index] of cases) {
      queries.length = 0;
      const page = await store.events.listEvents('acc_a', filter, 50);
      expect(page.items).toHaveLength(10);
      const q = queries.find((x) => x.sql.startsWith('select'))!;
      const client = await admin.connect();
      try {
        await client.query(`set search_path = "${schema}"`);
        const plan = (await client.query('explain ' + q.sql, [...q.parameters])).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
        expect({ filter, plan }).toEqual({ filter, plan: expect.stringMatching(index) });
      } finally {
        await client.query('reset search_path');
        client.release();
      }
    }
  });
});
