import { describe, expect, it } from 'vitest';
import { StoreRejectedError } from '../../../src/storage/store.js';
import { T0, alertRow, batch } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of AlertStore. */
export function alertsContract(sut: StoreContext): void {
  describe('alerts', () => {
    it('inserts, updates counters and evidence, keeps status and firstSeen', async () => {
      await sut.account('acc_a');
      const a = alertRow('acc_a', { eventIds: ['evt_1'] });
      await sut.store.commit(batch({ alerts: [{ alert: a, opened: true }] }));
      await sut.store.alerts.setAlertStatus('acc_a', a.id, 'acknowledged', T0 + 1);
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
      await sut.store.commit(batch({ alerts: [{ alert: next, opened: false }] }));
      expect(await sut.store.alerts.getAlert('acc_a', a.id)).toEqual({ ...next, status: 'acknowledged', firstSeen: T0 });
    });

    it('many writes of one alert in a group store its furthest state, inserted if any write opened it', async () => {
      await sut.account('acc_a');
      const opened = alertRow('acc_a', { eventIds: ['evt_1'] });
      const existing = alertRow('acc_a', { eventIds: ['evt_9'] });
      await sut.store.commit(batch({ alerts: [{ alert: existing, opened: true }] }));
      const step = (a: typeof opened, n: number) => ({ ...a, count: n, lastSeen: T0 + n, eventIds: Array.from({ length: n }, (_, i) => `evt_${i + 1}`) });
      await sut.store.commit(
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
      expect(await sut.store.alerts.getAlert('acc_a', opened.id)).toEqual(step(opened, 3));
      expect(await sut.store.alerts.getAlert('acc_a', existing.id)).toEqual(step(existing, 7));
    });

    it('several writes of one alert in one group leave its last state; a second insert of an id still fails', async () => {
      await sut.account('acc_a');
      const a = alertRow('acc_a', { eventIds: ['evt_1'] });
      const b = alertRow('acc_a', { subject: 'user_2' });
      await sut.store.commit(batch({ alerts: [{ alert: b, opened: true }] }));
      const step = (n: number, over: Partial<typeof a> = {}) => ({
        ...a,
        count: n,
        lastSeen: T0 + n,
        eventIds: Array.from({ length: n }, (_, i) => `evt_${i + 1}`),
        details: { seen: n },
        severity: n > 2 ? 'critical' : 'high',
        ...over,
      });
      await sut.store.commit(
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
      expect(await sut.store.alerts.getAlert('acc_a', a.id)).toEqual(step(3));
      expect(await sut.store.alerts.getAlert('acc_a', b.id)).toEqual({ ...b, count: 3, details: { seen: 3 } });
      const c = alertRow('acc_a', { subject: 'user_3' });
      await expect(
        sut.store.commit(
          batch({
            alerts: [
              { alert: step(4), opened: false },
              { alert: c, opened: true },
              { alert: c, opened: true },
            ],
          }),
        ),
      ).rejects.toBeInstanceOf(StoreRejectedError);
      expect(await sut.store.alerts.getAlert('acc_a', a.id)).toEqual(step(3));
      expect(await sut.store.alerts.getAlert('acc_a', c.id)).toBeUndefined();
    });

    it('sets status, per account only', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const a = alertRow('acc_a');
      await sut.store.commit(batch({ alerts: [{ alert: a, opened: true }] }));
      expect(await sut.store.alerts.setAlertStatus('acc_b', a.id, 'resolved', T0)).toBeUndefined();
      expect((await sut.store.alerts.getAlert('acc_a', a.id))?.status).toBe('open');
      expect(await sut.store.alerts.getAlert('acc_b', a.id)).toBeUndefined();
      for (const status of ['acknowledged', 'resolved', 'false_positive', 'open'] as const) {
        expect(await sut.store.alerts.setAlertStatus('acc_a', a.id, status, T0)).toEqual({ ...a, status });
      }
      expect(await sut.store.alerts.setAlertStatus('acc_a', 'alr_missing', 'resolved', T0)).toBeUndefined();
    });

    it('lists with filters and pages through every alert exactly once', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const alerts = Array.from({ length: 23 }, (_, i) =>
        alertRow(i % 6 === 5 ? 'acc_b' : 'acc_a', {
          type: i % 3 === 0 ? 'auth.brute_force.account' : 'auth.impossible_travel',
          severity: ['low', 'medium', 'high', 'critical'][i % 4] as string,
          status: (['open', 'acknowledged', 'resolved', 'false_positive'] as const)[i % 4 === 1 ? 1 : i % 5 === 2 ? 2 : 0],
          actorId: i % 4 === 0 ? null : (['user_1', 'user_%', "o'brien"][i % 3] as string),
          lastSeen: T0 + i * 1000,
        }),
      );
      await sut.store.commit(batch({ alerts: alerts.map((alert) => ({ alert, opened: true })) }));
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
            const page = await sut.store.alerts.listAlerts('acc_a', f, limit, cursor);
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

  describe('alert notes', () => {
    it('alert notes: listed oldest first, per account', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const note = (accountId: string, id: string, text: string) => ({
        id,
        accountId,
        alertId: 'alr_1',
        status: 'resolved' as const,
        note: text,
        createdAt: T0,
        author: { kind: 'member' as const, id: 'usr_1', label: 'ana@example.com' },
      });
      await sut.store.alerts.addAlertNote(note('acc_a', 'not_2', 'second'));
      await sut.store.alerts.addAlertNote(note('acc_a', 'not_1', 'first ✓'));
      await sut.store.alerts.addAlertNote(note('acc_b', 'not_3', 'other account'));
      expect(await sut.store.alerts.listAlertNotes('acc_a', 'alr_1')).toEqual([note('acc_a', 'not_1', 'first ✓'), note('acc_a', 'not_2', 'second')]);
      expect(await sut.store.alerts.listAlertNotes('acc_a', 'alr_2')).toEqual([]);
    });
  });
}
