import net from 'node:net';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { PostgresStore } from '../../src/storage/postgres.js';
import { StoreUnavailableError } from '../../src/storage/store.js';
import type { CommitBatch } from '../../src/storage/types.js';
import { batch, eventRow, T0, usage } from '../contract/store-fixtures.js';
import { adminPool, describePostgres, dropSchema, openTestStore, PG_URL } from './pg-helpers.js';
import { TcpProxy } from './tcp-proxy.js';

const tick = (ms = 2) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const withPort = (url: string, port: number): string => {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
};

/** Infrastructure faults: the store answers StoreUnavailableError, never half-writes, and recovers by itself. */
describePostgres('PostgreSQL faults', () => {
  let admin: pg.Pool;
  const cleanup: (() => Promise<void>)[] = [];
  beforeAll(() => {
    admin = adminPool();
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  afterAll(async () => {
    await admin.end();
  });

  async function open(url?: string): Promise<{ store: PostgresStore; schema: string; applicationName: string }> {
    const opened = await openTestStore({ poolSize: 4 }, url);
    cleanup.push(async () => {
      await opened.store.close();
      await dropSchema(admin, opened.schema);
    });
    await opened.store.accounts.createAccount({ id: 'acc_a', name: 'a', plan: 'pro', createdAt: T0 });
    return opened;
  }

  /** Ends every server session of this store; returns how many. */
  async function terminate(applicationName: string, onlyWaitingOnLock = false): Promise<number> {
    const { rows } = await admin.query<{ ok: boolean }>(
      `select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid() ${onlyWaitingOnLock ? "and wait_event_type = 'Lock'" : ''}`,
      [applicationName],
    );
    return rows.filter((r) => r.ok).length;
  }

  async function waitForLockWait(applicationName: string): Promise<void> {
    for (let i = 0; i < 2500; i++) {
      const { rows } = await admin.query(`select 1 from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`, [applicationName]);
      if (rows.length > 0) return;
      await tick();
    }
    throw new Error('the commit never blocked on the held lock');
  }

  async function storedIds(schema: string): Promise<Set<string>> {
    const { rows } = await admin.query<{ id: string }>(`select id from "${schema}".events`);
    return new Set(rows.map((r) => r.id));
  }

  it('an unreachable server gives StoreUnavailableError on every call', async () => {
    const port = await closedPort();
    const { openPostgresStore } = await import('../../src/storage/postgres.js');
    const store = openPostgresStore(withPort(PG_URL, port), { schema: 'vigil_unreachable', connectTimeoutMs: 2000 });
    try {
      await expect(store.migrate()).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.accounts.getAccount('acc_a')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.commit(batch({ events: [eventRow('acc_a')] }))).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close();
    }
  });

  it('recovers without being re-created when the database comes back', async () => {
    const target = new URL(PG_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    cleanup.push(() => proxy.stop());
    const { store, schema } = await open(withPort(PG_URL, port));
    const before = eventRow('acc_a');
    await store.commit(batch({ events: [before], usage: [usage('acc_a', 1)] }));

    await proxy.stop();
    const lost = eventRow('acc_a');
    await expect(store.commit(batch({ events: [lost], usage: [usage('acc_a', 1)] }))).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.events.getEvent('acc_a', before.id)).rejects.toBeInstanceOf(StoreUnavailableError);

    await proxy.start();
    await store.ping();
    const after = eventRow('acc_a');
    await store.commit(batch({ events: [after], usage: [usage('acc_a', 1)] }));
    expect([...(await storedIds(schema))].sort()).toEqual([before.id, after.id].sort());
    expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(2);
  });

  it('idle connections killed under it cost no error: reads and commits retry on a fresh connection', async () => {
    const { store, applicationName } = await open();
    await Promise.all([1, 2, 3, 4].map(() => store.events.countEvents('acc_a')));
    expect(await terminate(applicationName)).toBeGreaterThan(0);
    await store.commit(batch({ events: [eventRow('acc_a')] }));
    expect(await terminate(applicationName)).toBeGreaterThan(0);
    expect(await store.events.countEvents('acc_a')).toBe(1);
  });

  it('a commit whose session is killed mid-transaction throws StoreUnavailableError and writes nothing', async () => {
    const { store, schema, applicationName } = await open();
    await store.commit(batch({ usage: [usage('acc_a', 1)] }));
    const holder = await admin.connect();
    try {
      // Hold the usage row so the commit stops half-way, after its events insert.
      await holder.query('begin');
      await holder.query(`select * from "${schema}".usage_monthly where account_id = 'acc_a' for update`);
      const events = Array.from({ length: 5 }, () => eventRow('acc_a'));
      const pending = store.commit(batch({ events, usage: [usage('acc_a', 5)] }));
      const outcome = pending.then(
        () => undefined,
        (err: unknown) => err,
      );
      await waitForLockWait(applicationName);
      expect(await terminate(applicationName, true)).toBe(1);
      const err = await outcome;
      expect(err).toBeInstanceOf(StoreUnavailableError);
      await holder.query('rollback');
      const stored = await storedIds(schema);
      expect(events.filter((e) => stored.has(e.id))).toEqual([]);
      expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(1);
    } finally {
      holder.release();
    }
    await store.commit(batch({ events: [eventRow('acc_a')], usage: [usage('acc_a', 1)] }));
    expect(await store.events.countEvents('acc_a')).toBe(1);
    expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(2);
  });

  it('under pg_terminate_backend storms, commits succeed or throw StoreUnavailableError, all or nothing', async () => {
    const { store, schema, applicationName } = await open();
    const batches: CommitBatch[] = Array.from({ length: 100 }, () => {
      const events = Array.from({ length: 20 }, () => eventRow('acc_a'));
      return batch({ events, usage: [usage('acc_a', events.length)] });
    });
    const outcomes: unknown[] = new Array(batches.length);
    let next = 0;
    let done = false;
    const worker = async () => {
      while (next < batches.length) {
        const i = next++;
        outcomes[i] = await store.commit(batches[i]!).then(
          () => 'ok',
          (err: unknown) => err,
        );
      }
    };
    let kills = 0;
    const settled = () => outcomes.filter((o) => o !== undefined).length;
    // Kill every session of the store each time a few more commits have finished, so that
    // kills land on commits in every phase while the store still makes progress in between.
    const killer = async () => {
      let mark = 0;
      while (!done) {
        if (settled() >= mark + 3) {
          mark = settled();
          kills += await terminate(applicationName);
        }
        await tick(1);
      }
    };
    const killing = killer();
    try {
      await Promise.all([1, 2, 3, 4, 5, 6].map(worker));
    } finally {
      done = true;
      await killing;
    }

    expect(kills).toBeGreaterThan(0);
    const failures = outcomes.filter((o) => o !== 'ok');
    expect(failures.length).toBeLessThan(batches.length);
    for (const f of failures) expect(f).toBeInstanceOf(StoreUnavailableError);
    const stored = await storedIds(schema);
    batches.forEach((b, i) => {
      const present = b.events.filter((e) => stored.has(e.id)).length;
      // A failure may still have committed (the session died after COMMIT was sent), never partly.
      expect({ i, present }).toEqual({ i, present: outcomes[i] === 'ok' ? b.events.length : present === 0 ? 0 : b.events.length });
    });
    // Usage is written in the same transactions as the events, so it matches them exactly.
    expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(stored.size);

    await store.commit(batch({ events: [eventRow('acc_a')] }));
    expect(await store.events.countEvents('acc_a')).toBe(stored.size + 1);
    console.info(`[faults] ${kills} sessions killed; ${batches.length - failures.length} commits ok, ${failures.length} StoreUnavailableError`);
  }, 60_000);
});
