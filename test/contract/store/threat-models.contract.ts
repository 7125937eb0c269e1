import { describe, expect, it } from 'vitest';
import { StoreRejectedError } from '../../../src/storage/store.js';
import { T0 } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of ThreatModelStore. */
export function threatModelsContract(sut: StoreContext): void {
  describe('threat models', () => {
    const model = (accountId: string, id: string, createdAt = T0) =>
      sut.store.threatModels.createThreatModel({ id, accountId, enabled: true, definition: { rules: [id] }, source: { text: `model ${id}` }, createdAt });

    it('creates at version 1, reads, lists oldest first, per account', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const created = await model('acc_a', 'tm_2');
      expect(created).toEqual({
        id: 'tm_2',
        accountId: 'acc_a',
        version: 1,
        enabled: true,
        definition: { rules: ['tm_2'] },
        source: { text: 'model tm_2' },
        createdAt: T0,
        updatedAt: T0,
        suspendedAt: null,
        suspendedReason: null,
      });
      await model('acc_a', 'tm_1');
      await model('acc_b', 'tm_3');
      expect(await sut.store.threatModels.getThreatModel('acc_a', 'tm_2')).toEqual(created);
      expect(await sut.store.threatModels.getThreatModel('acc_b', 'tm_2')).toBeUndefined();
      expect((await sut.store.threatModels.listThreatModels('acc_a')).map((m) => m.id)).toEqual(['tm_1', 'tm_2']);
      await expect(model('acc_a', 'tm_1')).rejects.toBeInstanceOf(StoreRejectedError);
    });

    it('saves a new version only over the expected one, keeps every version, and a new version ends a suspension', async () => {
      await sut.account('acc_a');
      await model('acc_a', 'tm_1');
      expect(await sut.store.threatModels.suspendThreatModel('acc_a', 'tm_1', 1, T0 + 1, 'too slow')).toBe(true);
      expect(await sut.store.threatModels.suspendThreatModel('acc_a', 'tm_1', 1, T0 + 2, 'again')).toBe(false);
      expect(await sut.store.threatModels.getThreatModel('acc_a', 'tm_1')).toMatchObject({ suspendedAt: T0 + 1, suspendedReason: 'too slow' });
      const change = { enabled: false, definition: { rules: ['v2'] }, source: { text: 'v2' }, at: T0 + 5 };
      const saved = await sut.store.threatModels.updateThreatModel('acc_a', 'tm_1', 1, change);
      expect(saved).toMatchObject({ version: 2, enabled: false, definition: { rules: ['v2'] }, updatedAt: T0 + 5, suspendedAt: null, suspendedReason: null });
      expect(await sut.store.threatModels.updateThreatModel('acc_a', 'tm_1', 1, change)).toBeUndefined();
      expect(await sut.store.threatModels.suspendThreatModel('acc_a', 'tm_1', 1, T0 + 6, 'old version')).toBe(false);
      expect((await sut.store.threatModels.listThreatModelVersions('acc_a', 'tm_1')).map((v) => [v.version, v.definition])).toEqual([
        [2, { rules: ['v2'] }],
        [1, { rules: ['tm_1'] }],
      ]);
    });

    it('deletes a model with its versions, once', async () => {
      await sut.account('acc_a');
      await model('acc_a', 'tm_1');
      expect(await sut.store.threatModels.deleteThreatModel('acc_b', 'tm_1')).toBe(false);
      expect(await sut.store.threatModels.deleteThreatModel('acc_a', 'tm_1')).toBe(true);
      expect(await sut.store.threatModels.deleteThreatModel('acc_a', 'tm_1')).toBe(false);
      expect(await sut.store.threatModels.getThreatModel('acc_a', 'tm_1')).toBeUndefined();
      expect(await sut.store.threatModels.listThreatModelVersions('acc_a', 'tm_1')).toEqual([]);
    });
  });
}
