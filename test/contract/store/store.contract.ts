import { describe, expect, it } from 'vitest';
import { DAY, T0, batch, eventRow } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of the Store itself (migrations, health, upkeep). */
export function storeItselfContract(sut: StoreContext): void {
  describe('lifecycle', () => {
    it('migrates again without harm and answers ping', async () => {
      await sut.account('acc_a');
      await sut.store.migrate();
      await sut.store.ping();
      expect(await sut.store.accounts.countAccounts()).toBe(1);
    });

    it('maintain is repeatable and leaves every row readable', async () => {
      await sut.account('acc_a');
      const rows = [eventRow('acc_a', { receivedAt: T0 - 40 * DAY }), eventRow('acc_a'), eventRow('acc_a', { receivedAt: T0 + 70 * DAY })];
      await sut.store.commit(batch({ events: rows }));
      await sut.store.maintain(T0);
      await sut.store.maintain(T0);
      await sut.store.maintain(T0 + 65 * DAY);
      await sut.store.commit(batch({ events: [eventRow('acc_a', { receivedAt: T0 + 66 * DAY })] }));
      expect(await sut.store.events.countEvents('acc_a')).toBe(4);
      for (const row of rows) expect(await sut.store.events.getEvent('acc_a', row.id)).toEqual(row);
    });
  });
}
