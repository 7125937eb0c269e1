import { describe, expect, it } from 'vitest';
import { StoreRejectedError } from '../../../src/storage/store.js';
import type { EventRow } from '../../../src/storage/types.js';
import { DAY, T0, alertRow, batch, eventRow, idempotency, idempotencyOf, usage } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of Store.commit (what one commit group writes, read back through the aggregates). */
export function commitContract(sut: StoreContext): void {
  describe('commit', () => {
    it('writes events, alerts, usage and idempotency rows together, values exact', async () => {
      await sut.account('acc_a');
      const e = eventRow('acc_a', { eventId: 'client-1', tags: ['inferred:auth.failure', 'x'], riskScore: 72, occurredAt: T0 - 1234 });
      const a = alertRow('acc_a', { eventIds: [e.id] });
      await sut.store.commit(
        batch({ events: [e], alerts: [{ alert: a, opened: true }], usage: [usage('acc_a', 1)], idempotency: [idempotency('acc_a', 'client-1')] }),
      );
      const read = await sut.store.events.getEvent('acc_a', e.id);
      expect(read).toEqual(e);
      for (const n of [read?.occurredAt, read?.receivedAt, read?.riskScore]) expect(typeof n).toBe('number');
      expect(await sut.store.alerts.getAlert('acc_a', a.id)).toEqual(a);
      expect(await sut.store.stats.getUsage('acc_a', '2026-01')).toEqual({ accountId: 'acc_a', period: '2026-01', used: 1, dropped: 0 });
      expect(await idempotencyOf(sut.store, 'acc_a', 'client-1', T0 - DAY)).toEqual(idempotency('acc_a', 'client-1'));
      expect(await sut.store.events.countEvents('acc_a')).toBe(1);
    });

    it('accepts an empty batch', async () => {
      await sut.store.commit(batch({}));
      expect(await sut.store.accounts.countAccounts()).toBe(0);
    });

    it('writes a group larger than one insert statement', async () => {
      await sut.account('acc_a');
      const rows = Array.from({ length: 1203 }, () => eventRow('acc_a'));
      await sut.store.commit(batch({ events: rows }));
      expect(await sut.store.events.countEvents('acc_a')).toBe(1203);
    });

    it('writes nothing when one row fails: a duplicate event in the group', async () => {
      await sut.account('acc_a');
      const rows = Array.from({ length: 5 }, () => eventRow('acc_a'));
      const dup = rows[2] as EventRow;
      await expect(
        sut.store.commit(batch({ events: [...rows, dup], usage: [usage('acc_a', 6)], idempotency: [idempotency('acc_a', 'k1')] })),
      ).rejects.toBeInstanceOf(StoreRejectedError);
      expect(await sut.store.events.countEvents('acc_a')).toBe(0);
      expect((await sut.store.stats.getUsage('acc_a', '2026-01')).used).toBe(0);
      expect(await idempotencyOf(sut.store, 'acc_a', 'k1', 0)).toBeUndefined();
    });

    it('writes nothing when the failing row comes last, after several insert statements', async () => {
      await sut.account('acc_a');
      const existing = alertRow('acc_a');
      await sut.store.commit(batch({ alerts: [{ alert: existing, opened: true }] }));
      const rows = Array.from({ length: 1100 }, () => eventRow('acc_a'));
      await expect(
        sut.store.commit(batch({ events: rows, usage: [usage('acc_a', 1100)], alerts: [{ alert: { ...existing, count: 99 }, opened: true }] })),
      ).rejects.toBeInstanceOf(StoreRejectedError);
      expect(await sut.store.events.countEvents('acc_a')).toBe(0);
      expect(await sut.store.stats.getUsage('acc_a', '2026-01')).toEqual({ accountId: 'acc_a', period: '2026-01', used: 0, dropped: 0 });
      expect(await sut.store.alerts.getAlert('acc_a', existing.id)).toEqual(existing);
      expect(await sut.store.stats.dailyCounts('acc_a', 0)).toEqual([]);
    });

    it('keeps working after a failed commit', async () => {
      await sut.account('acc_a');
      const e = eventRow('acc_a');
      await sut.store.commit(batch({ events: [e] }));
      await expect(sut.store.commit(batch({ events: [e] }))).rejects.toBeInstanceOf(StoreRejectedError);
      await sut.store.commit(batch({ events: [eventRow('acc_a')] }));
      expect(await sut.store.events.countEvents('acc_a')).toBe(2);
    });

    it('adds usage up across commits and within one, per period and per day', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      await sut.store.commit(batch({ usage: [usage('acc_a', 3, 1), usage('acc_a', 2, 0), usage('acc_b', 7)] }));
      await sut.store.commit(batch({ usage: [usage('acc_a', 5, 2, T0 + DAY)] }));
      await sut.store.commit(batch({ usage: [usage('acc_a', 4, 0, Date.UTC(2026, 1, 3))] }));
      expect(await sut.store.stats.getUsage('acc_a', '2026-01')).toEqual({ accountId: 'acc_a', period: '2026-01', used: 10, dropped: 3 });
      expect(await sut.store.stats.getUsage('acc_a', '2026-02')).toEqual({ accountId: 'acc_a', period: '2026-02', used: 4, dropped: 0 });
      expect(await sut.store.stats.getUsage('acc_b', '2026-01')).toEqual({ accountId: 'acc_b', period: '2026-01', used: 7, dropped: 0 });
      expect(await sut.store.stats.getUsage('acc_a', '2025-12')).toEqual({ accountId: 'acc_a', period: '2025-12', used: 0, dropped: 0 });
      expect(await sut.store.stats.dailyCounts('acc_a', T0)).toEqual([
        { day: '2026-01-15', count: 5 },
        { day: '2026-01-16', count: 5 },
        { day: '2026-02-03', count: 4 },
      ]);
      expect(await sut.store.stats.dailyCounts('acc_a', T0 + DAY)).toEqual([
        { day: '2026-01-16', count: 5 },
        { day: '2026-02-03', count: 4 },
      ]);
      expect(await sut.store.stats.dailyCounts('acc_b', Date.UTC(2026, 0, 16))).toEqual([]);
    });

    it('writes groups touching the same rows in opposite orders concurrently', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const shared = alertRow('acc_a');
      const other = alertRow('acc_b');
      await sut.store.commit(
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
          return sut.store.commit(batch({ events: [eventRow('acc_a')], usage: forward ? u : u.reverse(), alerts: forward ? a : a.reverse() }));
        }),
      );
      expect((await sut.store.stats.getUsage('acc_a', '2026-01')).used).toBe(12);
      expect((await sut.store.stats.getUsage('acc_b', '2026-01')).used).toBe(12);
      expect(await sut.store.events.countEvents('acc_a')).toBe(12);
    });

    it('counts usage in the billions exactly', async () => {
      await sut.account('acc_a');
      await sut.store.commit(batch({ usage: [usage('acc_a', 3_000_000_000, 2_500_000_000)] }));
      await sut.store.commit(batch({ usage: [usage('acc_a', 3_000_000_000, 0)] }));
      const u = await sut.store.stats.getUsage('acc_a', '2026-01');
      expect(u).toEqual({ accountId: 'acc_a', period: '2026-01', used: 6_000_000_000, dropped: 2_500_000_000 });
      expect(typeof u.used).toBe('number');
    });
  });
}
