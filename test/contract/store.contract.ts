import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreRejectedError, type Store } from '../../src/storage/store.js';
import type { EventFilter, EventRow } from '../../src/storage/types.js';
import { ACTORS, alertRow, batch, DAY, eventRow, HOSTILE, idempotency, idempotencyOf, IPS, matches, nextId, T0, TAGS, TYPES, usage } from './store-fixtures.js';

/** A migrated, empty store and how to throw it away. */
export interface StoreUnderTest {
  readonly store: Store;
  dispose(): Promise<void>;
}

/**
 * The behaviour every Store implementation must show. Each test gets a fresh, migrated,
 * empty store from `factory`.
 */
export function storeContract(name: string, factory: () => Promise<StoreUnderTest>): void {
  describe(`Store contract: ${name}`, () => {
    let sut: StoreUnderTest;
    let store: Store;
    beforeEach(async () => {
      sut = await factory();
      store = sut.store;
    });
    afterEach(async () => {
      await sut.dispose();
    });

    const account = (id: string, createdAt = T0) => store.accounts.createAccount({ id, name: `name of ${id}`, plan: 'starter', createdAt });
    const key = (accountId: string, hash: string, kind: 'secret' | 'publishable' = 'secret') =>
      store.accounts.createKey({
        id: nextId('key'),
        accountId,
        kind,
        hash,
        prefix: `vgl_sk_${hash.slice(0, 4)}`,
        allowedOrigins: ['https://a.example', "https://o'k.example"],
        createdAt: T0,
      });
    /** Every page of a listing, checking that the cursor moves strictly down. */
    async function allPages(accountId: string, filter: EventFilter, limit: number): Promise<EventRow[]> {
      const out: EventRow[] = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 1000; guard++) {
        const page = await store.events.listEvents(accountId, filter, limit, cursor);
        expect(page.items.length).toBeLessThanOrEqual(limit);
        out.push(...page.items);
        if (page.nextCursor === null) return out;
        expect(page.items.length).toBe(limit);
        cursor = page.nextCursor;
      }
      throw new Error('pagination did not end');
    }

    describe('lifecycle', () => {
      it('migrates again without harm and answers ping', async () => {
        await account('acc_a');
        await store.migrate();
        await store.ping();
        expect(await store.accounts.countAccounts()).toBe(1);
      });

      it('maintain is repeatable and leaves every row readable', async () => {
        await account('acc_a');
        const rows = [eventRow('acc_a', { receivedAt: T0 - 40 * DAY }), eventRow('acc_a'), eventRow('acc_a', { receivedAt: T0 + 70 * DAY })];
        await store.commit(batch({ events: rows }));
        await store.maintain(T0);
        await store.maintain(T0);
        await store.maintain(T0 + 65 * DAY);
        await store.commit(batch({ events: [eventRow('acc_a', { receivedAt: T0 + 66 * DAY })] }));
        expect(await store.events.countEvents('acc_a')).toBe(4);
        for (const row of rows) expect(await store.events.getEvent('acc_a', row.id)).toEqual(row);
      });
    });

    describe('accounts', () => {
      it('creates, reads, lists in creation order, counts and updates', async () => {
        expect(await store.accounts.countAccounts()).toBe(0);
        const created = await account('acc_b', T0 + 1);
        expect(created).toEqual({ id: 'acc_b', name: 'name of acc_b', plan: 'starter', createdAt: T0 + 1, settings: {} });
        await account('acc_a', T0 + 2);
        await account('acc_c', T0 + 1);
        expect(await store.accounts.getAccount('acc_b')).toEqual(created);
        expect((await store.accounts.listAccounts()).map((a) => a.id)).toEqual(['acc_b', 'acc_c', 'acc_a']);
        expect(await store.accounts.countAccounts()).toBe(3);

        const settings = { thresholds: { challenge: 40 }, allowlist: { ips: ['10.0.0.0/8'] }, note: 'it\'s "quoted" %_' };
        const updated = await store.accounts.updateAccount('acc_b', { plan: 'pro', settings });
        expect(updated).toEqual({ ...created, plan: 'pro', settings });
        expect(await store.accounts.updateAccount('acc_b', { name: 'renamed' })).toEqual({ ...created, plan: 'pro', settings, name: 'renamed' });
        expect(await store.accounts.updateAccount('acc_b', {})).toEqual({ ...created, plan: 'pro', settings, name: 'renamed' });
      });

      it('answers undefined for unknown accounts', async () => {
        expect(await store.accounts.getAccount('acc_missing')).toBeUndefined();
        expect(await store.accounts.updateAccount('acc_missing', { plan: 'pro' })).toBeUndefined();
      });

      it('refuses a duplicate id with StoreRejectedError', async () => {
        await account('acc_a');
        await expect(account('acc_a')).rejects.toBeInstanceOf(StoreRejectedError);
        expect(await store.accounts.countAccounts()).toBe(1);
      });

      it('keeps timestamps exact and numeric', async () => {
        const big = 8_640_000_000_000_000; // the largest Date, far beyond 32 bits
        const a = await store.accounts.createAccount({ id: 'acc_big', name: 'n', plan: 'free', createdAt: big });
        expect(a.createdAt).toBe(big);
        const read = await store.accounts.getAccount('acc_big');
        expect(typeof read?.createdAt).toBe('number');
        expect(read?.createdAt).toBe(big);
      });
    });

    describe('keys', () => {
      it('finds a key by hash with its account', async () => {
        const acc = await account('acc_a');
        const k = await key('acc_a', 'hash_1');
        await key('acc_a', 'hash_2', 'publishable');
        const found = await store.accounts.findKeyByHash('hash_1');
        expect(found).toEqual({ key: k, hash: 'hash_1', account: acc });
        expect(found?.key.allowedOrigins).toEqual(['https://a.example', "https://o'k.example"]);
        expect(typeof found?.key.createdAt).toBe('number');
        expect(found?.key.revokedAt).toBeNull();
        expect((await store.accounts.findKeyByHash('hash_2'))?.key.kind).toBe('publishable');
      });

      it('answers undefined for unknown hashes, hostile ones included', async () => {
        await account('acc_a');
        await key('acc_a', 'hash_1');
        for (const h of [...HOSTILE, 'hash_%', 'hash__', 'HASH_1', '']) expect(await store.accounts.findKeyByHash(h)).toBeUndefined();
      });

      it('lists keys, all or per account', async () => {
        await account('acc_a');
        await account('acc_b');
        const k1 = await key('acc_a', 'h1');
        const k2 = await key('acc_b', 'h2');
        const k3 = await key('acc_a', 'h3');
        expect(await store.accounts.listKeys('acc_a')).toEqual([k1, k3]);
        expect(await store.accounts.listKeys('acc_b')).toEqual([k2]);
        expect((await store.accounts.listKeys()).map((k) => k.id).sort()).toEqual([k1.id, k2.id, k3.id].sort());
        expect(await store.accounts.listKeys('acc_%')).toEqual([]);
      });

      it('revokes: the key is still found, with revokedAt; a second revoke keeps the first time', async () => {
        await account('acc_a');
        const k = await key('acc_a', 'h1');
        expect(await store.accounts.revokeKey(k.id, T0 + 5)).toBe(true);
        expect((await store.accounts.findKeyByHash('h1'))?.key.revokedAt).toBe(T0 + 5);
        expect(await store.accounts.revokeKey(k.id, T0 + 9)).toBe(true);
        expect((await store.accounts.findKeyByHash('h1'))?.key.revokedAt).toBe(T0 + 5);
        expect((await store.accounts.listKeys('acc_a'))[0]?.revokedAt).toBe(T0 + 5);
      });

      it('answers false when revoking an unknown key', async () => {
        expect(await store.accounts.revokeKey('key_missing', T0)).toBe(false);
        expect(await store.accounts.revokeKey("' or 1=1 --", T0)).toBe(false);
      });

      it('replaces allowed origins; the key is otherwise unchanged and found with them; unknown keys answer undefined', async () => {
        await account('acc_a');
        const k = await key('acc_a', 'h1', 'publishable');
        const other = await key('acc_a', 'h2', 'publishable');
        const origins = ['https://a.example', "https://o'k.example", '*'];
        expect(await store.accounts.setKeyOrigins(k.id, origins)).toEqual({ ...k, allowedOrigins: origins });
        expect((await store.accounts.findKeyByHash('h1'))?.key.allowedOrigins).toEqual(origins);
        expect(await store.accounts.listKeys('acc_a')).toEqual([{ ...k, allowedOrigins: origins }, other]);
        expect((await store.accounts.setKeyOrigins(k.id, []))?.allowedOrigins).toEqual([]);
        expect(await store.accounts.setKeyOrigins('key_missing', origins)).toBeUndefined();
        expect(await store.accounts.setKeyOrigins("' or 1=1 --", origins)).toBeUndefined();
        expect((await store.accounts.listKeys('acc_a')).map((x) => x.allowedOrigins)).toEqual([[], other.allowedOrigins]);
      });

      it('refuses a duplicate hash with StoreRejectedError', async () => {
        await account('acc_a');
        await key('acc_a', 'h1');
        await expect(key('acc_a', 'h1')).rejects.toBeInstanceOf(StoreRejectedError);
        expect(await store.accounts.listKeys('acc_a')).toHaveLength(1);
      });
    });

    describe('commit', () => {
      it('writes events, alerts, usage and idempotency rows together, values exact', async () => {
        await account('acc_a');
        const e = eventRow('acc_a', { eventId: 'client-1', tags: ['inferred:auth.failure', 'x'], riskScore: 72, occurredAt: T0 - 1234 });
        const a = alertRow('acc_a', { eventIds: [e.id] });
        await store.commit(
          batch({ events: [e], alerts: [{ alert: a, opened: true }], usage: [usage('acc_a', 1)], idempotency: [idempotency('acc_a', 'client-1')] }),
        );
        const read = await store.events.getEvent('acc_a', e.id);
        expect(read).toEqual(e);
        for (const n of [read?.occurredAt, read?.receivedAt, read?.riskScore]) expect(typeof n).toBe('number');
        expect(await store.alerts.getAlert('acc_a', a.id)).toEqual(a);
        expect(await store.stats.getUsage('acc_a', '2026-01')).toEqual({ accountId: 'acc_a', period: '2026-01', used: 1, dropped: 0 });
        expect(await idempotencyOf(store, 'acc_a', 'client-1', T0 - DAY)).toEqual(idempotency('acc_a', 'client-1'));
        expect(await store.events.countEvents('acc_a')).toBe(1);
      });

      it('accepts an empty batch', async () => {
        await store.commit(batch({}));
        expect(await store.accounts.countAccounts()).toBe(0);
      });

      it('writes a group larger than one insert statement', async () => {
        await account('acc_a');
        const rows = Array.from({ length: 1203 }, () => eventRow('acc_a'));
        await store.commit(batch({ events: rows }));
        expect(await store.events.countEvents('acc_a')).toBe(1203);
      });

      it('writes nothing when one row fails: a duplicate event in the group', async () => {
        await account('acc_a');
        const rows = Array.from({ length: 5 }, () => eventRow('acc_a'));
        const dup = rows[2] as EventRow;
        await expect(
          store.commit(batch({ events: [...rows, dup], usage: [usage('acc_a', 6)], idempotency: [idempotency('acc_a', 'k1')] })),
        ).rejects.toBeInstanceOf(StoreRejectedError);
        expect(await store.events.countEvents('acc_a')).toBe(0);
        expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(0);
        expect(await idempotencyOf(store, 'acc_a', 'k1', 0)).toBeUndefined();
      });

      it('writes nothing when the failing row comes last, after several insert statements', async () => {
        await account('acc_a');
        const existing = alertRow('acc_a');
        await store.commit(batch({ alerts: [{ alert: existing, opened: true }] }));
        const rows = Array.from({ length: 1100 }, () => eventRow('acc_a'));
        await expect(
          store.commit(batch({ events: rows, usage: [usage('acc_a', 1100)], alerts: [{ alert: { ...existing, count: 99 }, opened: true }] })),
        ).rejects.toBeInstanceOf(StoreRejectedError);
        expect(await store.events.countEvents('acc_a')).toBe(0);
        expect(await store.stats.getUsage('acc_a', '2026-01')).toEqual({ accountId: 'acc_a', period: '2026-01', used: 0, dropped: 0 });
        expect(await store.alerts.getAlert('acc_a', existing.id)).toEqual(existing);
        expect(await store.stats.dailyCounts('acc_a', 0)).toEqual([]);
      });

      it('keeps working after a failed commit', async () => {
        await account('acc_a');
        const e = eventRow('acc_a');
        await store.commit(batch({ events: [e] }));
        await expect(store.commit(batch({ events: [e] }))).rejects.toBeInstanceOf(StoreRejectedError);
        await store.commit(batch({ events: [eventRow('acc_a')] }));
        expect(await store.events.countEvents('acc_a')).toBe(2);
      });

      it('adds usage up across commits and within one, per period and per day', async () => {
        await account('acc_a');
        await account('acc_b');
        await store.commit(batch({ usage: [usage('acc_a', 3, 1), usage('acc_a', 2, 0), usage('acc_b', 7)] }));
        await store.commit(batch({ usage: [usage('acc_a', 5, 2, T0 + DAY)] }));
        await store.commit(batch({ usage: [usage('acc_a', 4, 0, Date.UTC(2026, 1, 3))] }));
        expect(await store.stats.getUsage('acc_a', '2026-01')).toEqual({ accountId: 'acc_a', period: '2026-01', used: 10, dropped: 3 });
        expect(await store.stats.getUsage('acc_a', '2026-02')).toEqual({ accountId: 'acc_a', period: '2026-02', used: 4, dropped: 0 });
        expect(await store.stats.getUsage('acc_b', '2026-01')).toEqual({ accountId: 'acc_b', period: '2026-01', used: 7, dropped: 0 });
        expect(await store.stats.getUsage('acc_a', '2025-12')).toEqual({ accountId: 'acc_a', period: '2025-12', used: 0, dropped: 0 });
        expect(await store.stats.dailyCounts('acc_a', T0)).toEqual([
          { day: '2026-01-15', count: 5 },
          { day: '2026-01-16', count: 5 },
          { day: '2026-02-03', count: 4 },
        ]);
        expect(await store.stats.dailyCounts('acc_a', T0 + DAY)).toEqual([
          { day: '2026-01-16', count: 5 },
          { day: '2026-02-03', count: 4 },
        ]);
        expect(await store.stats.dailyCounts('acc_b', Date.UTC(2026, 0, 16))).toEqual([]);
      });

      it('writes groups touching the same rows in opposite orders concurrently', async () => {
        await account('acc_a');
        await account('acc_b');
        const shared = alertRow('acc_a');
        const other = alertRow('acc_b');
        await store.commit(
          batch({
            alerts: [
              { alert: shared, opened: true },
              { alert: other, opened: true },
            ],
          }),
        );
        // Groups from different instances touch the same usage and alert rows in any order;
        // the store must serialise them, not deadlock.
        await Promise.all(
          Array.from({ length: 12 }, (_, i) => {
            const forward = i % 2 === 0;
            const u = [usage('acc_a', 1), usage('acc_b', 1)];
            const a = [
              { alert: { ...shared, count: i + 2 }, opened: false },
              { alert: { ...other, count: i + 2 }, opened: false },
            ];
            return store.commit(batch({ events: [eventRow('acc_a')], usage: forward ? u : u.reverse(), alerts: forward ? a : a.reverse() }));
          }),
        );
        expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(12);
        expect((await store.stats.getUsage('acc_b', '2026-01')).used).toBe(12);
        expect(await store.events.countEvents('acc_a')).toBe(12);
      });

      it('counts usage in the billions exactly', async () => {
        await account('acc_a');
        await store.commit(batch({ usage: [usage('acc_a', 3_000_000_000, 2_500_000_000)] }));
        await store.commit(batch({ usage: [usage('acc_a', 3_000_000_000, 0)] }));
        const u = await store.stats.getUsage('acc_a', '2026-01');
        expect(u).toEqual({ accountId: 'acc_a', period: '2026-01', used: 6_000_000_000, dropped: 2_500_000_000 });
        expect(typeof u.used).toBe('number');
      });
    });

    describe('idempotency', () => {
      it('keeps the payload digest, and a row without one (written before digests were kept) reads back as null', async () => {
        await account('acc_a');
        const legacy = { ...idempotency('acc_a', 'legacy', T0), payloadDigest: null };
        await store.commit(batch({ idempotency: [idempotency('acc_a', 'with-digest', T0), legacy] }));
        expect((await idempotencyOf(store, 'acc_a', 'with-digest', 0))?.payloadDigest).toBe('digest-of-with-digest');
        expect(await idempotencyOf(store, 'acc_a', 'legacy', 0)).toEqual(legacy);
      });

      it('finds rows written in the window, per account, exact event_id only', async () => {
        await account('acc_a');
        await account('acc_b');
        await store.commit(batch({ idempotency: [idempotency('acc_a', 'evt-1', T0), idempotency('acc_a', 'a_b', T0)] }));
        expect(await idempotencyOf(store, 'acc_a', 'evt-1', T0)).toEqual(idempotency('acc_a', 'evt-1', T0));
        expect(await idempotencyOf(store, 'acc_a', 'evt-1', T0 + 1)).toBeUndefined();
        expect(await idempotencyOf(store, 'acc_b', 'evt-1', 0)).toBeUndefined();
        expect(await idempotencyOf(store, 'acc_a', 'a%', 0)).toBeUndefined();
        expect(await idempotencyOf(store, 'acc_a', 'a_', 0)).toBeUndefined();
        expect(await idempotencyOf(store, 'acc_a', 'axb', 0)).toBeUndefined();
      });

      it('looks up many event ids at once: the stored ones of this account in the window, keyed by event id', async () => {
        await account('acc_a');
        await account('acc_b');
        const many = Array.from({ length: 1_205 }, (_, i) => idempotency('acc_a', `many-${i}`, T0));
        await store.commit(batch({ idempotency: [...many, idempotency('acc_a', 'early', T0 - 10), idempotency('acc_b', 'other-account', T0)] }));
        const asked = [...many.map((r) => r.eventId), 'early', 'other-account', 'never-sent', 'many-7'];
        const found = await store.events.findIdempotency('acc_a', asked, T0);
        expect(found.size).toBe(many.length);
        expect(found.get('many-1204')).toEqual(many[1204]);
        expect(found.has('early') || found.has('other-account') || found.has('never-sent')).toBe(false);
        expect((await store.events.findIdempotency('acc_a', [], 0)).size).toBe(0);
      });

      it('two rows for one event_id in the same group: the last one wins', async () => {
        await account('acc_a');
        const first = idempotency('acc_a', 'same', T0);
        const last = { ...idempotency('acc_a', 'same', T0 + 1), response: { status: 'accepted', id: 'evt_last' } };
        await store.commit(batch({ events: [eventRow('acc_a')], idempotency: [first, idempotency('acc_a', 'other', T0), last] }));
        expect(await idempotencyOf(store, 'acc_a', 'same', 0)).toEqual(last);
        expect(await store.events.countEvents('acc_a')).toBe(1);
      });

      it('a second write for the same event_id replaces the first', async () => {
        await account('acc_a');
        await store.commit(batch({ idempotency: [idempotency('acc_a', 'e1', T0)] }));
        const later = { ...idempotency('acc_a', 'e1', T0 + 10), response: { status: 'accepted', id: 'evt_second' } };
        await store.commit(batch({ idempotency: [later] }));
        expect(await idempotencyOf(store, 'acc_a', 'e1', 0)).toEqual(later);
      });

      it('prunes rows created before the cut-off, for every account', async () => {
        await account('acc_a');
        await account('acc_b');
        await store.commit(
          batch({ idempotency: [idempotency('acc_a', 'old', T0 - 8 * DAY), idempotency('acc_b', 'old', T0 - 8 * DAY), idempotency('acc_a', 'new', T0)] }),
        );
        expect(await store.events.pruneIdempotency(T0 - 7 * DAY)).toBe(2);
        expect(await idempotencyOf(store, 'acc_a', 'old', 0)).toBeUndefined();
        expect(await idempotencyOf(store, 'acc_a', 'new', 0)).toBeDefined();
        expect(await store.events.pruneIdempotency(T0 - 7 * DAY)).toBe(0);
      });
    });

    describe('event listing', () => {
      /** A varied data set in two accounts: the reference model decides what each filter returns. */
      async function seed(): Promise<EventRow[]> {
        await account('acc_a');
        await account('acc_b');
        const rows: EventRow[] = [];
        for (let i = 0; i < 48; i++) {
          rows.push(
            eventRow(i % 5 === 4 ? 'acc_b' : 'acc_a', {
              type: TYPES[i % TYPES.length] as string,
              actorId: i % 7 === 3 ? null : (ACTORS[i % ACTORS.length] as string),
              ip: i % 6 === 2 ? null : (IPS[i % IPS.length] as string),
              riskScore: (i * 37) % 101,
              occurredAt: T0 - ((i * 13) % 20) * 3_600_000,
              receivedAt: T0 + i,
              tags: TAGS.filter((_, t) => (i + t) % 4 === 0),
            }),
          );
        }
        await store.commit(batch({ events: rows.slice(0, 20) }));
        await store.commit(batch({ events: rows.slice(20) }));
        return rows;
      }

      const expected = (rows: readonly EventRow[], accountId: string, f: EventFilter) =>
        rows
          .filter((e) => e.accountId === accountId && matches(e, f))
          .map((e) => e.id)
          .sort()
          .reverse();

      it('pages through every row exactly once, newest id first, at any page size', async () => {
        const rows = await seed();
        for (const limit of [1, 2, 7, 38, 39, 100]) {
          const got = (await allPages('acc_a', {}, limit)).map((e) => e.id);
          expect(got).toEqual(expected(rows, 'acc_a', {}));
        }
      });

      it('applies each filter alone', async () => {
        const rows = await seed();
        const cases: EventFilter[] = [
          { type: 'auth.login.failure' },
          { type: 'auth.login' },
          { typePrefix: 'auth.' },
          { typePrefix: 'auth.login.' },
          { typePrefix: 'auth.login_' },
          { typePrefix: '' },
          { actorId: 'user_1' },
          { actorId: "o'brien" },
          { ip: '2001:db8::1' },
          { minRisk: 50 },
          { minRisk: 0 },
          { minRisk: 100 },
          { since: T0 - 5 * 3_600_000 },
          { until: T0 - 5 * 3_600_000 },
          { since: T0 - 10 * 3_600_000, until: T0 - 2 * 3_600_000 },
          { tag: 'a_b' },
          { tag: '100%' },
          { tag: 'quote"tag' },
          { tag: 'back\\slash' },
          { tag: 'a","b' },
          { tag: 'inferred:auth' },
        ];
        for (const f of cases) {
          const got = (await allPages('acc_a', f, 5)).map((e) => e.id);
          expect({ f, got }).toEqual({ f, got: expected(rows, 'acc_a', f) });
        }
        // The cases above must mean something: most select some rows, none selects all.
        const sizes = cases.map((f) => expected(rows, 'acc_a', f).length);
        expect(sizes.filter((n) => n > 0).length).toBeGreaterThan(15);
      });

      it('treats SQL metacharacters and LIKE wildcards in every filter as plain text', async () => {
        const rows = await seed();
        for (const s of HOSTILE) {
          for (const f of [{ type: s }, { typePrefix: s }, { typePrefix: `auth.${s}` }, { actorId: s }, { ip: s }, { tag: s }] as EventFilter[]) {
            const got = (await allPages('acc_a', f, 50)).map((e) => e.id);
            expect({ f, got }).toEqual({ f, got: expected(rows, 'acc_a', f) });
          }
          const page = await store.events.listEvents('acc_a', {}, 5, s);
          expect(page.items.every((e) => e.id < s)).toBe(true);
        }
        expect(await store.events.countEvents('acc_a')).toBe(rows.filter((e) => e.accountId === 'acc_a').length);
      });

      it('combines filters and pages through them exactly once (property)', async () => {
        const rows = await seed();
        const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
        const filterArb = fc.record({
          type: maybe(fc.constantFrom(...TYPES, ...HOSTILE)),
          typePrefix: maybe(fc.constantFrom('auth.', 'auth.login', 'auth.login_', 'a', 'api.', '%', '_', ...HOSTILE)),
          actorId: maybe(fc.constantFrom(...ACTORS, ...HOSTILE)),
          ip: maybe(fc.constantFrom(...IPS)),
          minRisk: maybe(fc.integer({ min: 0, max: 100 })),
          since: maybe(fc.integer({ min: T0 - 20 * 3_600_000, max: T0 })),
          until: maybe(fc.integer({ min: T0 - 20 * 3_600_000, max: T0 + 1 })),
          tag: maybe(fc.constantFrom(...TAGS, ...HOSTILE)),
        });
        await fc.assert(
          fc.asyncProperty(filterArb, fc.integer({ min: 1, max: 9 }), fc.constantFrom('acc_a', 'acc_b'), async (raw, limit, accountId) => {
            const f = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)) as EventFilter;
            const got = (await allPages(accountId, f, limit)).map((e) => e.id);
            expect(got).toEqual(expected(rows, accountId, f));
          }),
          { numRuns: 60 },
        );
      });

      it('answers not found for lookups by text no row can hold (U+0000)', async () => {
        await seed();
        const nul = 'a\u0000b';
        await key('acc_a', 'h1');
        expect(await store.accounts.getAccount(nul)).toBeUndefined();
        expect(await store.accounts.updateAccount(nul, { plan: 'pro' })).toBeUndefined();
        expect(await store.accounts.findKeyByHash(`h1${nul}`)).toBeUndefined();
        expect(await store.accounts.listKeys(nul)).toEqual([]);
        expect(await store.accounts.revokeKey(nul, T0)).toBe(false);
        expect(await store.accounts.setKeyOrigins(nul, [])).toBeUndefined();
        expect(await store.events.getEvent('acc_a', nul)).toBeUndefined();
        expect(await store.events.getEvent(nul, 'evt_x')).toBeUndefined();
        for (const f of [{ type: nul }, { typePrefix: nul }, { actorId: nul }, { ip: nul }, { tag: nul }] as EventFilter[]) {
          expect(await store.events.listEvents('acc_a', f, 10)).toEqual({ items: [], nextCursor: null });
        }
        expect(await store.events.countEvents(nul)).toBe(0);
        expect(await idempotencyOf(store, 'acc_a', nul, 0)).toBeUndefined();
        expect(await store.alerts.getAlert('acc_a', nul)).toBeUndefined();
        expect(await store.alerts.listAlerts('acc_a', { actorId: nul }, 10)).toEqual({ items: [], nextCursor: null });
        expect(await store.alerts.setAlertStatus('acc_a', nul, 'resolved', T0)).toBeUndefined();
        expect(await store.stats.getUsage(nul, '2026-01')).toEqual({ accountId: nul, period: '2026-01', used: 0, dropped: 0 });
        expect(await store.stats.dailyCounts(nul, 0)).toEqual([]);
        expect(await store.events.pruneEvents(nul, T0 + DAY)).toBe(0);
      });

      it('an event with U+0000 in a text column is stored or rejected whole, never an outage', async () => {
        await account('acc_a');
        const e = eventRow('acc_a', { actorId: 'x\u0000y' });
        const outcome = await store.commit(batch({ events: [eventRow('acc_a'), e], usage: [usage('acc_a', 2)] })).then(
          () => 'stored',
          (err: unknown) => err,
        );
        if (outcome === 'stored') {
          expect(await store.events.getEvent('acc_a', e.id)).toEqual(e);
        } else {
          expect(outcome).toBeInstanceOf(StoreRejectedError);
          expect(await store.events.countEvents('acc_a')).toBe(0);
          expect((await store.stats.getUsage('acc_a', '2026-01')).used).toBe(0);
        }
      });

      it('isolates accounts: another account id reads as not found', async () => {
        const rows = await seed();
        const ofB = rows.find((e) => e.accountId === 'acc_b') as EventRow;
        expect(await store.events.getEvent('acc_b', ofB.id)).toEqual(ofB);
        expect(await store.events.getEvent('acc_a', ofB.id)).toBeUndefined();
        expect(await store.events.getEvent('acc_a', 'evt_missing')).toBeUndefined();
        expect((await allPages('acc_b', {}, 100)).every((e) => e.accountId === 'acc_b')).toBe(true);
        expect(await store.events.countEvents('acc_b')).toBe(rows.filter((e) => e.accountId === 'acc_b').length);
        expect(await store.events.countEvents('acc_%')).toBe(0);
        expect((await store.events.listEvents('acc_%', {}, 10)).items).toEqual([]);
      });
    });

    describe('alerts', () => {
      it('inserts, updates counters and evidence, keeps status and firstSeen', async () => {
        await account('acc_a');
        const a = alertRow('acc_a', { eventIds: ['evt_1'] });
        await store.commit(batch({ alerts: [{ alert: a, opened: true }] }));
        await store.alerts.setAlertStatus('acc_a', a.id, 'acknowledged', T0 + 1);
        const next = {
          ...a,
          count: 3,
          lastSeen: T0 + 60_000,
          eventIds: ['evt_1', 'evt_2', 'evt_3'],
          details: { threshold: 10, seen: 3 },
          severity: 'critical',
          status: 'open' as const,
          firstSeen: T0 + 999,
        };
        await store.commit(batch({ alerts: [{ alert: next, opened: false }] }));
        expect(await store.alerts.getAlert('acc_a', a.id)).toEqual({ ...next, status: 'acknowledged', firstSeen: T0 });
      });

      it('many writes of one alert in a group store its furthest state, inserted if any write opened it', async () => {
        await account('acc_a');
        const opened = alertRow('acc_a', { eventIds: ['evt_1'] });
        const existing = alertRow('acc_a', { eventIds: ['evt_9'] });
        await store.commit(batch({ alerts: [{ alert: existing, opened: true }] }));
        const step = (a: typeof opened, n: number) => ({ ...a, count: n, lastSeen: T0 + n, eventIds: Array.from({ length: n }, (_, i) => `evt_${i + 1}`) });
        await store.commit(
          batch({
            alerts: [
              // Written out of order, as two interleaved requests can hand them in.
              { alert: step(opened, 2), opened: false },
              { alert: step(opened, 1), opened: true },
              { alert: step(existing, 7), opened: false },
              { alert: step(opened, 3), opened: false },
              { alert: step(existing, 6), opened: false },
            ],
          }),
        );
        expect(await store.alerts.getAlert('acc_a', opened.id)).toEqual(step(opened, 3));
        expect(await store.alerts.getAlert('acc_a', existing.id)).toEqual(step(existing, 7));
      });

      it('several writes of one alert in one group leave its last state; a second insert of an id still fails', async () => {
        await account('acc_a');
        const a = alertRow('acc_a', { eventIds: ['evt_1'] });
        const b = alertRow('acc_a', { subject: 'user_2' });
        await store.commit(batch({ alerts: [{ alert: b, opened: true }] }));
        const step = (n: number, over: Partial<typeof a> = {}) => ({
          ...a,
          count: n,
          lastSeen: T0 + n,
          eventIds: Array.from({ length: n }, (_, i) => `evt_${i + 1}`),
          details: { seen: n },
          severity: n > 2 ? 'critical' : 'high',
          ...over,
        });
        await store.commit(
          batch({
            alerts: [
              { alert: a, opened: true },
              { alert: step(2, { status: 'resolved', firstSeen: T0 + 5, subject: 'ignored' }), opened: false },
              { alert: { ...b, count: 2, details: { seen: 2 } }, opened: false },
              { alert: step(3), opened: false },
              { alert: { ...b, count: 3, details: { seen: 3 } }, opened: false },
            ],
          }),
        );
        expect(await store.alerts.getAlert('acc_a', a.id)).toEqual(step(3));
        expect(await store.alerts.getAlert('acc_a', b.id)).toEqual({ ...b, count: 3, details: { seen: 3 } });
        const c = alertRow('acc_a', { subject: 'user_3' });
        await expect(
          store.commit(
            batch({
              alerts: [
                { alert: step(4), opened: false },
                { alert: c, opened: true },
                { alert: c, opened: true },
              ],
            }),
          ),
        ).rejects.toBeInstanceOf(StoreRejectedError);
        expect(await store.alerts.getAlert('acc_a', a.id)).toEqual(step(3));
        expect(await store.alerts.getAlert('acc_a', c.id)).toBeUndefined();
      });

      it('sets status, per account only', async () => {
        await account('acc_a');
        await account('acc_b');
        const a = alertRow('acc_a');
        await store.commit(batch({ alerts: [{ alert: a, opened: true }] }));
        expect(await store.alerts.setAlertStatus('acc_b', a.id, 'resolved', T0)).toBeUndefined();
        expect((await store.alerts.getAlert('acc_a', a.id))?.status).toBe('open');
        expect(await store.alerts.getAlert('acc_b', a.id)).toBeUndefined();
        for (const status of ['acknowledged', 'resolved', 'false_positive', 'open'] as const) {
          expect(await store.alerts.setAlertStatus('acc_a', a.id, status, T0)).toEqual({ ...a, status });
        }
        expect(await store.alerts.setAlertStatus('acc_a', 'alr_missing', 'resolved', T0)).toBeUndefined();
      });

      it('lists with filters and pages through every alert exactly once', async () => {
        await account('acc_a');
        await account('acc_b');
        const alerts = Array.from({ length: 23 }, (_, i) =>
          alertRow(i % 6 === 5 ? 'acc_b' : 'acc_a', {
            type: i % 3 === 0 ? 'auth.brute_force.account' : 'auth.impossible_travel',
            severity: ['low', 'medium', 'high', 'critical'][i % 4] as string,
            status: (['open', 'acknowledged', 'resolved', 'false_positive'] as const)[i % 4 === 1 ? 1 : i % 5 === 2 ? 2 : 0],
            actorId: i % 4 === 0 ? null : (['user_1', 'user_%', "o'brien"][i % 3] as string),
            lastSeen: T0 + i * 1000,
          }),
        );
        await store.commit(batch({ alerts: alerts.map((alert) => ({ alert, opened: true })) }));
        const filters = [
          {},
          { type: 'auth.impossible_travel' },
          { severity: 'high' },
          { status: 'acknowledged' as const },
          { actorId: 'user_%' },
          { actorId: 'user_' },
          { since: T0 + 10_000 },
          { type: 'auth.brute_force.account', severity: 'low', since: T0 },
          { type: '%' },
          { typePrefix: 'auth.' },
          { typePrefix: 'auth.brute_force.' },
          { typePrefix: 'auth_' },
          { typePrefix: '%' },
        ];
        for (const f of filters) {
          for (const limit of [1, 4, 50]) {
            const got: string[] = [];
            let cursor: string | undefined;
            do {
              const page = await store.alerts.listAlerts('acc_a', f, limit, cursor);
              got.push(...page.items.map((x) => x.id));
              cursor = page.nextCursor ?? undefined;
            } while (cursor !== undefined);
            const want = alerts
              .filter(
                (x) =>
                  x.accountId === 'acc_a' &&
                  (f.type === undefined || x.type === f.type) &&
                  (f.typePrefix === undefined || x.type.startsWith(f.typePrefix)) &&
                  (f.severity === undefined || x.severity === f.severity) &&
                  (f.status === undefined || x.status === f.status) &&
                  (f.actorId === undefined || x.actorId === f.actorId) &&
                  (f.since === undefined || x.lastSeen >= f.since),
              )
              .map((x) => x.id)
              .sort()
              .reverse();
            expect({ f, limit, got }).toEqual({ f, limit, got: want });
          }
        }
      });
    });

    describe('dashboard', () => {
      it('overview: counts per bucket since the start, open alerts by severity, top actors and addresses, open kill chains; one account only', async () => {
        await account('acc_a');
        await account('acc_b');
        const HOUR = 3_600_000;
        const events = [
          eventRow('acc_a', { receivedAt: T0 - 5 * HOUR, actorId: 'old', riskScore: 99 }),
          eventRow('acc_a', { receivedAt: T0, actorId: 'alice', ip: '198.51.100.1', riskScore: 70 }),
          eventRow('acc_a', { receivedAt: T0 + 10, actorId: 'alice', ip: '198.51.100.1', riskScore: 20 }),
          eventRow('acc_a', { receivedAt: T0 + HOUR + 5, actorId: 'bob', ip: '198.51.100.2', riskScore: 40 }),
          eventRow('acc_a', { receivedAt: T0 + HOUR + 6, actorId: null, ip: null, riskScore: 0 }),
          eventRow('acc_b', { receivedAt: T0, actorId: 'alice', ip: '198.51.100.1', riskScore: 100 }),
        ];
        const chain = alertRow('acc_a', { type: 'chain.account_takeover', severity: 'critical', firstSeen: T0 + HOUR, lastSeen: T0 + HOUR });
        const closedChain = alertRow('acc_a', { type: 'chain.cover_tracks', severity: 'critical', status: 'resolved', firstSeen: T0, lastSeen: T0 });
        const high = alertRow('acc_a', { severity: 'high', status: 'acknowledged', firstSeen: T0 - 5 * HOUR });
        const other = alertRow('acc_b', { type: 'chain.account_takeover', severity: 'critical' });
        await store.commit(batch({ events, alerts: [chain, closedChain, high, other].map((alert) => ({ alert, opened: true })) }));
        const since = T0 - (T0 % HOUR);
        const o = await store.stats.overview('acc_a', since, HOUR);
        expect(o.events).toEqual([
          { at: since, count: 2 },
          { at: since + HOUR, count: 2 },
        ]);
        expect(o.alerts).toEqual([
          { at: since, count: 1 },
          { at: since + HOUR, count: 1 },
        ]);
        expect(o.openBySeverity).toEqual({ critical: 1, high: 1 });
        expect(o.topActors).toEqual([
          { value: 'alice', count: 2, maxRisk: 70 },
          { value: 'bob', count: 1, maxRisk: 40 },
        ]);
        expect(o.topIps).toEqual([
          { value: '198.51.100.1', count: 2, maxRisk: 70 },
          { value: '198.51.100.2', count: 1, maxRisk: 40 },
        ]);
        expect(o.chains.map((c) => c.id)).toEqual([chain.id]);
        expect(await store.stats.overview('acc_none', since, HOUR)).toEqual({
          events: [],
          alerts: [],
          openBySeverity: {},
          topActors: [],
          topIps: [],
          chains: [],
        });
      });

      it('sessions: found by id hash with the key hash until they expire; deleting one also sweeps the expired', async () => {
        await account('acc_a');
        const k = await key('acc_a', 'hash_of_key_a');
        const session = (idHash: string, expiresAt: number) => ({
          idHash,
          accountId: 'acc_a',
          keyId: k.id,
          csrfToken: `csrf ${idHash}`,
          createdAt: T0,
          expiresAt,
        });
        await store.sessions.createDashboardSession(session('s1', T0 + 1000));
        await store.sessions.createDashboardSession(session('s2', T0 + 10));
        await store.sessions.createDashboardSession(session('s3', T0 + 1000));
        expect(await store.sessions.findDashboardSession('s1', T0)).toEqual({ session: session('s1', T0 + 1000), keyHash: 'hash_of_key_a' });
        expect(await store.sessions.findDashboardSession('s2', T0 + 10)).toBeUndefined();
        expect(await store.sessions.findDashboardSession('nope', T0)).toBeUndefined();
        await store.sessions.deleteDashboardSession('s1', T0 + 20);
        expect(await store.sessions.findDashboardSession('s1', T0)).toBeUndefined();
        expect(await store.sessions.findDashboardSession('s2', T0)).toBeUndefined();
        expect(await store.sessions.findDashboardSession('s3', T0)).toBeDefined();
        await expect(store.sessions.createDashboardSession(session('s3', T0))).rejects.toBeInstanceOf(StoreRejectedError);
      });

      it('alert notes: listed oldest first, per account', async () => {
        await account('acc_a');
        await account('acc_b');
        const note = (accountId: string, id: string, text: string) => ({
          id,
          accountId,
          alertId: 'alr_1',
          status: 'resolved' as const,
          note: text,
          createdAt: T0,
        });
        await store.alerts.addAlertNote(note('acc_a', 'not_2', 'second'));
        await store.alerts.addAlertNote(note('acc_a', 'not_1', 'first ✓'));
        await store.alerts.addAlertNote(note('acc_b', 'not_3', 'other account'));
        expect(await store.alerts.listAlertNotes('acc_a', 'alr_1')).toEqual([note('acc_a', 'not_1', 'first ✓'), note('acc_a', 'not_2', 'second')]);
        expect(await store.alerts.listAlertNotes('acc_a', 'alr_2')).toEqual([]);
      });
    });

    describe('retention', () => {
      it('prunes one account by receive time, strictly before the cut-off', async () => {
        await account('acc_a');
        await account('acc_b');
        const old = eventRow('acc_a', { receivedAt: T0 - 10 * DAY });
        const edge = eventRow('acc_a', { receivedAt: T0 - 7 * DAY });
        const fresh = eventRow('acc_a', { receivedAt: T0 });
        const otherOld = eventRow('acc_b', { receivedAt: T0 - 10 * DAY });
        await store.commit(batch({ events: [old, edge, fresh, otherOld] }));
        expect(await store.events.pruneEvents('acc_a', T0 - 7 * DAY)).toBe(1);
        expect(await store.events.getEvent('acc_a', old.id)).toBeUndefined();
        expect(await store.events.getEvent('acc_a', edge.id)).toEqual(edge);
        expect(await store.events.getEvent('acc_b', otherOld.id)).toEqual(otherOld);
        expect(await store.events.pruneEvents('acc_a', T0 - 7 * DAY)).toBe(0);
        expect(await store.events.pruneEvents("acc_a' or '1'='1", T0 + DAY)).toBe(0);
        expect(await store.events.countEvents('acc_a')).toBe(2);
      });

      it('drops every account’s events received before the cut-off, across months', async () => {
        await account('acc_a');
        await account('acc_b');
        await store.maintain(Date.UTC(2025, 10, 1));
        await store.maintain(Date.UTC(2026, 0, 1));
        const at = [Date.UTC(2025, 10, 3), Date.UTC(2025, 11, 31, 23, 59), Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 20), Date.UTC(2026, 1, 2)];
        const rows = at.flatMap((receivedAt) => [eventRow('acc_a', { receivedAt }), eventRow('acc_b', { receivedAt })]);
        await store.commit(batch({ events: rows }));
        const cut = Date.UTC(2026, 0, 10);
        const result = await store.events.dropEventsBefore(cut);
        expect(result.partitionsDropped + result.rowsDeleted).toBeGreaterThan(0);
        for (const row of rows) {
          const read = await store.events.getEvent(row.accountId, row.id);
          if (row.receivedAt < cut) expect(read).toBeUndefined();
          else expect(read).toEqual(row);
        }
        await store.commit(batch({ events: [eventRow('acc_a', { receivedAt: Date.UTC(2025, 11, 5) })] }));
        expect(await store.events.countEvents('acc_a')).toBe(3);
      });
    });
  });
}
