import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { openSqliteStore, type SqliteStore } from '../../src/storage/sqlite.js';
import type { EventFilter, EventRow } from '../../src/storage/types.js';
import { ACTORS, alertRow, batch, eventRow, IPS, matches, T0 } from '../contract/store-fixtures.js';

const HOUR = 3_600_000;
const dirs: string[] = [];
const stores: SqliteStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-event-hours-'));
  dirs.push(dir);
  return dir;
}

async function opened(dir: string): Promise<SqliteStore> {
  const store = openSqliteStore({ dataDir: dir, synchronous: 'normal' });
  stores.push(store);
  await store.migrate();
  return store;
}

/** Every page of a listing, as the read API walks it. */
async function allPages(store: SqliteStore, accountId: string, filter: EventFilter, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.events.listEvents(accountId, filter, limit, cursor);
    ids.push(...page.items.map((e) => e.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return ids;
}

const expected = (rows: readonly EventRow[], accountId: string, filter: EventFilter): string[] =>
  rows
    .filter((e) => e.accountId === accountId && matches(e, filter))
    .map((e) => e.id)
    .sort()
    .reverse();

describe('SQLite actor and address hours', () => {
  it('the migration replaces the actor and ip indexes with summaries of events stored under the previous schema', async () => {
    const dir = tempDir();
    const database = new SqliteDatabase(join(dir, 'vigil.db'));
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
    const migrator = new Migrator({ db, provider: migrationProvider, migrationTableName: 'vigil_migrations', migrationLockTableName: 'vigil_migrations_lock' });
    expect((await migrator.migrateTo('005-idempotency-digest')).error).toBeUndefined();
    // Ids out of receive order, several hours and both accounts, so neither order can stand in for the other.
    const rows = Array.from({ length: 120 }, (_, i) =>
      eventRow(i % 5 === 0 ? 'acc_b' : 'acc_a', {
        id: `evt_${String((i * 37) % 120).padStart(4, '0')}`,
        receivedAt: T0 + ((i * 7) % 30) * HOUR + i,
        actorId: i % 9 === 4 ? null : (ACTORS[i % ACTORS.length] as string),
        ip: i % 8 === 3 ? null : (IPS[i % IPS.length] as string),
      }),
    );
    const insert = database.prepare(
      'insert into events (id, account_id, type, event_id, occurred_at, received_at, actor_id, ip, risk_score, tags, doc) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (const e of rows) insert.run(e.id, e.accountId, e.type, e.eventId, e.occurredAt, e.receivedAt, e.actorId, e.ip, e.riskScore, '[]', '{}');
    await db.destroy();

    const store = await opened(dir);
    const indexes = new SqliteDatabase(join(dir, 'vigil.db'), { readonly: true });
    const names = indexes.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'events'").pluck().all();
    indexes.close();
    expect(names).not.toContain('events_account_actor');
    expect(names).not.toContain('events_account_ip');
    for (const accountId of ['acc_a', 'acc_b']) {
      for (const actorId of ACTORS) expect(await allPages(store, accountId, { actorId }, 4)).toEqual(expected(rows, accountId, { actorId }));
      for (const ip of IPS) {
        expect(await allPages(store, accountId, { ip }, 3)).toEqual(expected(rows, accountId, { ip }));
        expect(await allPages(store, accountId, { ip, actorId: 'user_1' }, 2)).toEqual(expected(rows, accountId, { ip, actorId: 'user_1' }));
      }
    }
  });

  it('an actor whose summary hour retention deleted is found again when it returns in that hour', async () => {
    const store = await opened(tempDir());
    const first = eventRow('acc_a', { receivedAt: T0, actorId: 'alice', ip: '198.51.100.1' });
    await store.commit(batch({ events: [first] }));
    expect(await store.events.pruneEvents('acc_a', T0 + HOUR)).toBe(1);
    const again = eventRow('acc_a', { receivedAt: T0 + 5, actorId: 'alice', ip: '198.51.100.1' });
    await store.commit(batch({ events: [again] }));
    expect((await store.events.listEvents('acc_a', { actorId: 'alice' }, 10)).items.map((e) => e.id)).toEqual([again.id]);
    expect((await store.events.listEvents('acc_a', { ip: '198.51.100.1' }, 10)).items.map((e) => e.id)).toEqual([again.id]);

    await store.events.dropEventsBefore(T0 + HOUR);
    const third = eventRow('acc_a', { receivedAt: T0 + 6, actorId: 'alice', ip: '198.51.100.1' });
    await store.commit(batch({ events: [third] }));
    expect((await store.events.listEvents('acc_a', { actorId: 'alice' }, 10)).items.map((e) => e.id)).toEqual([third.id]);
  });

  it('an actor or address summarised for one account, or as the other kind, is summarised again for its own', async () => {
    const store = await opened(tempDir());
    const a = eventRow('acc_a', { receivedAt: T0, actorId: 'alice', ip: '198.51.100.7' });
    await store.commit(batch({ events: [a] }));
    const b = eventRow('acc_b', { receivedAt: T0 + 1, actorId: 'alice', ip: '198.51.100.7' });
    await store.commit(batch({ events: [b] }));
    // An actor id that reads as an address, then that address as an address.
    const asActor = eventRow('acc_a', { receivedAt: T0 + 2, actorId: '203.0.113.5', ip: '198.51.100.7' });
    await store.commit(batch({ events: [asActor] }));
    const asAddress = eventRow('acc_a', { receivedAt: T0 + 3, actorId: 'alice', ip: '203.0.113.5' });
    await store.commit(batch({ events: [asAddress] }));
    const ids = async (accountId: string, filter: EventFilter) => (await store.events.listEvents(accountId, filter, 10)).items.map((e) => e.id);
    expect(await ids('acc_b', { actorId: 'alice' })).toEqual([b.id]);
    expect(await ids('acc_b', { ip: '198.51.100.7' })).toEqual([b.id]);
    expect(await ids('acc_a', { actorId: 'alice' })).toEqual([asAddress.id, a.id]);
    expect(await ids('acc_a', { ip: '203.0.113.5' })).toEqual([asAddress.id]);
    expect(await ids('acc_a', { actorId: '203.0.113.5' })).toEqual([asActor.id]);
  });

  it('a commit that fails leaves no actor believed summarised', async () => {
    const store = await opened(tempDir());
    const taken = alertRow('acc_a');
    await store.commit(batch({ alerts: [{ alert: taken, opened: true }] }));
    // The new actor's event and summary rows are written, then opening an alert under a taken id fails the transaction.
    const failing = batch({ events: [eventRow('acc_a', { receivedAt: T0, actorId: 'carol', ip: '203.0.113.9' })], alerts: [{ alert: taken, opened: true }] });
    await expect(store.commit(failing)).rejects.toThrow();
    const later = eventRow('acc_a', { receivedAt: T0 + 1, actorId: 'carol', ip: '203.0.113.9' });
    await store.commit(batch({ events: [later] }));
    expect((await store.events.listEvents('acc_a', { actorId: 'carol' }, 10)).items.map((e) => e.id)).toEqual([later.id]);
    expect((await store.events.listEvents('acc_a', { ip: '203.0.113.9' }, 10)).items.map((e) => e.id)).toEqual([later.id]);
  });
});
