import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreRejectedError } from '../../../src/storage/store.js';
import type { EventFilter, EventRow } from '../../../src/storage/types.js';
import { ACTORS, DAY, HOSTILE, IPS, T0, TAGS, TYPES, batch, eventRow, idempotency, idempotencyOf, matches, usage } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of EventStore. */
export function eventsContract(sut: StoreContext): void {
  describe('idempotency', () => {
    it('keeps the payload digest, and a row without one (written before digests were kept) reads back as null', async () => {
      await sut.account('acc_a');
      const legacy = { ...idempotency('acc_a', 'legacy', T0), payloadDigest: null };
      await sut.store.commit(batch({ idempotency: [idempotency('acc_a', 'with-digest', T0), legacy] }));
      expect((await idempotencyOf(sut.store, 'acc_a', 'with-digest', 0))?.payloadDigest).toBe('digest-of-with-digest');
      expect(await idempotencyOf(sut.store, 'acc_a', 'legacy', 0)).toEqual(legacy);
    });

    it('finds rows written in the window, per account, exact event_id only', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      await sut.store.commit(batch({ idempotency: [idempotency('acc_a', 'evt-1', T0), idempotency('acc_a', 'a_b', T0)] }));
      expect(await idempotencyOf(sut.store, 'acc_a', 'evt-1', T0)).toEqual(idempotency('acc_a', 'evt-1', T0));
      expect(await idempotencyOf(sut.store, 'acc_a', 'evt-1', T0 + 1)).toBeUndefined();
      expect(await idempotencyOf(sut.store, 'acc_b', 'evt-1', 0)).toBeUndefined();
      expect(await idempotencyOf(sut.store, 'acc_a', 'a%', 0)).toBeUndefined();
      expect(await idempotencyOf(sut.store, 'acc_a', 'a_', 0)).toBeUndefined();
      expect(await idempotencyOf(sut.store, 'acc_a', 'axb', 0)).toBeUndefined();
    });

    it('looks up many event ids at once: the stored ones of this account in the window, keyed by event id', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const many = Array.from({ length: 1_205 }, (_, i) => idempotency('acc_a', `many-${i}`, T0));
      await sut.store.commit(batch({ idempotency: [...many, idempotency('acc_a', 'early', T0 - 10), idempotency('acc_b', 'other-account', T0)] }));
      const asked = [...many.map((r) => r.eventId), 'early', 'other-account', 'never-sent', 'many-7'];
      const found = await sut.store.events.findIdempotency('acc_a', asked, T0);
      expect(found.size).toBe(many.length);
      expect(found.get('many-1204')).toEqual(many[1204]);
      expect(found.has('early') || found.has('other-account') || found.has('never-sent')).toBe(false);
      expect((await sut.store.events.findIdempotency('acc_a', [], 0)).size).toBe(0);
    });

    it('two rows for one event_id in the same group: the last one wins', async () => {
      await sut.account('acc_a');
      const first = idempotency('acc_a', 'same', T0);
      const last = { ...idempotency('acc_a', 'same', T0 + 1), response: { status: 'accepted', id: 'evt_last' } };
      await sut.store.commit(batch({ events: [eventRow('acc_a')], idempotency: [first, idempotency('acc_a', 'other', T0), last] }));
      expect(await idempotencyOf(sut.store, 'acc_a', 'same', 0)).toEqual(last);
      expect(await sut.store.events.countEvents('acc_a')).toBe(1);
    });

    it('a second write for the same event_id replaces the first', async () => {
      await sut.account('acc_a');
      await sut.store.commit(batch({ idempotency: [idempotency('acc_a', 'e1', T0)] }));
      const later = { ...idempotency('acc_a', 'e1', T0 + 10), response: { status: 'accepted', id: 'evt_second' } };
      await sut.store.commit(batch({ idempotency: [later] }));
      expect(await idempotencyOf(sut.store, 'acc_a', 'e1', 0)).toEqual(later);
    });

    it('prunes rows created before the cut-off, for every account', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      await sut.store.commit(
        batch({ idempotency: [idempotency('acc_a', 'old', T0 - 8 * DAY), idempotency('acc_b', 'old', T0 - 8 * DAY), idempotency('acc_a', 'new', T0)] }),
      );
      expect(await sut.store.events.pruneIdempotency(T0 - 7 * DAY)).toBe(2);
      expect(await idempotencyOf(sut.store, 'acc_a', 'old', 0)).toBeUndefined();
      expect(await idempotencyOf(sut.store, 'acc_a', 'new', 0)).toBeDefined();
      expect(await sut.store.events.pruneIdempotency(T0 - 7 * DAY)).toBe(0);
    });
  });

  describe('event listing', () => {
    /** A varied data set in two accounts: the reference model decides what each filter returns. */
    async function seed(): Promise<EventRow[]> {
      await sut.account('acc_a');
      await sut.account('acc_b');
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
      await sut.store.commit(batch({ events: rows.slice(0, 20) }));
      await sut.store.commit(batch({ events: rows.slice(20) }));
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
        const got = (await sut.allPages('acc_a', {}, limit)).map((e) => e.id);
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
        const got = (await sut.allPages('acc_a', f, 5)).map((e) => e.id);
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
          const got = (await sut.allPages('acc_a', f, 50)).map((e) => e.id);
          expect({ f, got }).toEqual({ f, got: expected(rows, 'acc_a', f) });
        }
        const page = await sut.store.events.listEvents('acc_a', {}, 5, s);
        expect(page.items.every((e) => e.id < s)).toBe(true);
      }
      expect(await sut.store.events.countEvents('acc_a')).toBe(rows.filter((e) => e.accountId === 'acc_a').length);
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
          const got = (await sut.allPages(accountId, f, limit)).map((e) => e.id);
          expect(got).toEqual(expected(rows, accountId, f));
        }),
        { numRuns: 60 },
      );
    });

    it('answers not found for lookups by text no row can hold (U+0000)', async () => {
      await seed();
      const nul = 'a\u0000b';
      await sut.key('acc_a', 'h1');
      expect(await sut.store.accounts.getAccount(nul)).toBeUndefined();
      expect(await sut.store.accounts.updateAccount(nul, { plan: 'pro' })).toBeUndefined();
      expect(await sut.store.accounts.findKeyByHash(`h1${nul}`)).toBeUndefined();
      expect(await sut.store.accounts.listKeys(nul)).toEqual([]);
      expect(await sut.store.accounts.revokeKey(nul, T0)).toBe(false);
      expect(await sut.store.accounts.setKeyOrigins(nul, [])).toBeUndefined();
      expect(await sut.store.events.getEvent('acc_a', nul)).toBeUndefined();
      expect(await sut.store.events.getEvent(nul, 'evt_x')).toBeUndefined();
      for (const f of [{ type: nul }, { typePrefix: nul }, { actorId: nul }, { ip: nul }, { tag: nul }] as EventFilter[]) {
        expect(await sut.store.events.listEvents('acc_a', f, 10)).toEqual({ items: [], nextCursor: null });
      }
      expect(await sut.store.events.countEvents(nul)).toBe(0);
      expect(await idempotencyOf(sut.store, 'acc_a', nul, 0)).toBeUndefined();
      expect(await sut.store.alerts.getAlert('acc_a', nul)).toBeUndefined();
      expect(await sut.store.alerts.listAlerts('acc_a', { actorId: nul }, 10)).toEqual({ items: [], nextCursor: null });
      expect(await sut.store.alerts.setAlertStatus('acc_a', nul, 'resolved', T0)).toBeUndefined();
      expect(await sut.store.stats.getUsage(nul, '2026-01')).toEqual({ accountId: nul, period: '2026-01', used: 0, dropped: 0 });
      expect(await sut.store.stats.dailyCounts(nul, 0)).toEqual([]);
      expect(await sut.store.events.pruneEvents(nul, T0 + DAY)).toBe(0);
    });

    it('an event with U+0000 in a text column is stored or rejected whole, never an outage', async () => {
      await sut.account('acc_a');
      const e = eventRow('acc_a', { actorId: 'x\u0000y' });
      const outcome = await sut.store.commit(batch({ events: [eventRow('acc_a'), e], usage: [usage('acc_a', 2)] })).then(
        () => 'stored',
        (err: unknown) => err,
      );
      if (outcome === 'stored') {
        expect(await sut.store.events.getEvent('acc_a', e.id)).toEqual(e);
      } else {
        expect(outcome).toBeInstanceOf(StoreRejectedError);
        expect(await sut.store.events.countEvents('acc_a')).toBe(0);
        expect((await sut.store.stats.getUsage('acc_a', '2026-01')).used).toBe(0);
      }
    });

    it('isolates accounts: another account id reads as not found', async () => {
      const rows = await seed();
      const ofB = rows.find((e) => e.accountId === 'acc_b') as EventRow;
      expect(await sut.store.events.getEvent('acc_b', ofB.id)).toEqual(ofB);
      expect(await sut.store.events.getEvent('acc_a', ofB.id)).toBeUndefined();
      expect(await sut.store.events.getEvent('acc_a', 'evt_missing')).toBeUndefined();
      expect((await sut.allPages('acc_b', {}, 100)).every((e) => e.accountId === 'acc_b')).toBe(true);
      expect(await sut.store.events.countEvents('acc_b')).toBe(rows.filter((e) => e.accountId === 'acc_b').length);
      expect(await sut.store.events.countEvents('acc_%')).toBe(0);
      expect((await sut.store.events.listEvents('acc_%', {}, 10)).items).toEqual([]);
    });
  });

  describe('retention', () => {
    it('prunes one account by receive time, strictly before the cut-off', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const old = eventRow('acc_a', { receivedAt: T0 - 10 * DAY });
      const edge = eventRow('acc_a', { receivedAt: T0 - 7 * DAY });
      const fresh = eventRow('acc_a', { receivedAt: T0 });
      const otherOld = eventRow('acc_b', { receivedAt: T0 - 10 * DAY });
      await sut.store.commit(batch({ events: [old, edge, fresh, otherOld] }));
      expect(await sut.store.events.pruneEvents('acc_a', T0 - 7 * DAY)).toBe(1);
      expect(await sut.store.events.getEvent('acc_a', old.id)).toBeUndefined();
      expect(await sut.store.events.getEvent('acc_a', edge.id)).toEqual(edge);
      expect(await sut.store.events.getEvent('acc_b', otherOld.id)).toEqual(otherOld);
      expect(await sut.store.events.pruneEvents('acc_a', T0 - 7 * DAY)).toBe(0);
      expect(await sut.store.events.pruneEvents("acc_a' or '1'='1", T0 + DAY)).toBe(0);
      expect(await sut.store.events.countEvents('acc_a')).toBe(2);
    });

    it('drops every account’s events received before the cut-off, across months', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      await sut.store.maintain(Date.UTC(2025, 10, 1));
      await sut.store.maintain(Date.UTC(2026, 0, 1));
      const at = [Date.UTC(2025, 10, 3), Date.UTC(2025, 11, 31, 23, 59), Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 20), Date.UTC(2026, 1, 2)];
      const rows = at.flatMap((receivedAt) => [eventRow('acc_a', { receivedAt }), eventRow('acc_b', { receivedAt })]);
      await sut.store.commit(batch({ events: rows }));
      const cut = Date.UTC(2026, 0, 10);
      const result = await sut.store.events.dropEventsBefore(cut);
      expect(result.partitionsDropped + result.rowsDeleted).toBeGreaterThan(0);
      for (const row of rows) {
        const read = await sut.store.events.getEvent(row.accountId, row.id);
        if (row.receivedAt < cut) expect(read).toBeUndefined();
        else expect(read).toEqual(row);
      }
      await sut.store.commit(batch({ events: [eventRow('acc_a', { receivedAt: Date.UTC(2025, 11, 5) })] }));
      expect(await sut.store.events.countEvents('acc_a')).toBe(3);
    });
  });
}
