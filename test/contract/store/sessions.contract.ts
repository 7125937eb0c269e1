import { describe, expect, it } from 'vitest';
import { StoreRejectedError } from '../../../src/storage/store.js';
import { T0 } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of SessionStore. */
export function sessionsContract(sut: StoreContext): void {
  describe('sessions', () => {
    it('sessions: found by id hash with the key hash until they expire; deleting one also sweeps the expired', async () => {
      await sut.account('acc_a');
      const k = await sut.key('acc_a', 'hash_of_key_a');
      const session = (idHash: string, expiresAt: number) => ({
        idHash,
        accountId: 'acc_a',
        keyId: k.id,
        csrfToken: `csrf ${idHash}`,
        createdAt: T0,
        expiresAt,
      });
      await sut.store.sessions.createDashboardSession(session('s1', T0 + 1000));
      await sut.store.sessions.createDashboardSession(session('s2', T0 + 10));
      await sut.store.sessions.createDashboardSession(session('s3', T0 + 1000));
      expect(await sut.store.sessions.findDashboardSession('s1', T0)).toEqual({ session: session('s1', T0 + 1000), keyHash: 'hash_of_key_a' });
      expect(await sut.store.sessions.findDashboardSession('s2', T0 + 10)).toBeUndefined();
      expect(await sut.store.sessions.findDashboardSession('nope', T0)).toBeUndefined();
      await sut.store.sessions.deleteDashboardSession('s1', T0 + 20);
      expect(await sut.store.sessions.findDashboardSession('s1', T0)).toBeUndefined();
      expect(await sut.store.sessions.findDashboardSession('s2', T0)).toBeUndefined();
      expect(await sut.store.sessions.findDashboardSession('s3', T0)).toBeDefined();
      await expect(sut.store.sessions.createDashboardSession(session('s3', T0))).rejects.toBeInstanceOf(StoreRejectedError);
    });
  });
}
