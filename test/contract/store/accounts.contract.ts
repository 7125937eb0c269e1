import { describe, expect, it } from 'vitest';
import { StoreRejectedError } from '../../../src/storage/store.js';
import { HOSTILE, T0 } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

/** The contract of AccountStore. */
export function accountsContract(sut: StoreContext): void {
  describe('accounts', () => {
    it('creates, reads, lists in creation order, counts and updates', async () => {
      expect(await sut.store.accounts.countAccounts()).toBe(0);
      const created = await sut.account('acc_b', T0 + 1);
      expect(created).toEqual({ id: 'acc_b', name: 'name of acc_b', plan: 'starter', createdAt: T0 + 1, settings: {} });
      await sut.account('acc_a', T0 + 2);
      await sut.account('acc_c', T0 + 1);
      expect(await sut.store.accounts.getAccount('acc_b')).toEqual(created);
      expect((await sut.store.accounts.listAccounts()).map((a) => a.id)).toEqual(['acc_b', 'acc_c', 'acc_a']);
      expect(await sut.store.accounts.countAccounts()).toBe(3);

      const settings = { thresholds: { challenge: 40 }, allowlist: { ips: ['10.0.0.0/8'] }, note: 'it\'s "quoted" %_' };
      const updated = await sut.store.accounts.updateAccount('acc_b', { plan: 'pro', settings });
      expect(updated).toEqual({ ...created, plan: 'pro', settings });
      expect(await sut.store.accounts.updateAccount('acc_b', { name: 'renamed' })).toEqual({ ...created, plan: 'pro', settings, name: 'renamed' });
      expect(await sut.store.accounts.updateAccount('acc_b', {})).toEqual({ ...created, plan: 'pro', settings, name: 'renamed' });
    });

    it('creates the first account once, however many callers race for it, and none once an account exists', async () => {
      const tries = await Promise.all(
        Array.from({ length: 8 }, (_, i) => sut.store.accounts.createFirstAccount({ id: `acc_first${i}`, name: 'default', plan: 'free', createdAt: T0 })),
      );
      const created = tries.filter((a) => a !== undefined);
      expect(created).toHaveLength(1);
      expect(await sut.store.accounts.listAccounts()).toEqual(created);
      expect(await sut.store.accounts.createFirstAccount({ id: 'acc_later', name: 'default', plan: 'free', createdAt: T0 })).toBeUndefined();
      expect(await sut.store.accounts.countAccounts()).toBe(1);
    });

    it('answers undefined for unknown accounts', async () => {
      expect(await sut.store.accounts.getAccount('acc_missing')).toBeUndefined();
      expect(await sut.store.accounts.updateAccount('acc_missing', { plan: 'pro' })).toBeUndefined();
    });

    it('refuses a duplicate id with StoreRejectedError', async () => {
      await sut.account('acc_a');
      await expect(sut.account('acc_a')).rejects.toBeInstanceOf(StoreRejectedError);
      expect(await sut.store.accounts.countAccounts()).toBe(1);
    });

    it('keeps timestamps exact and numeric', async () => {
      const big = 8_640_000_000_000_000; // the largest Date, far beyond 32 bits
      const a = await sut.store.accounts.createAccount({ id: 'acc_big', name: 'n', plan: 'free', createdAt: big });
      expect(a.createdAt).toBe(big);
      const read = await sut.store.accounts.getAccount('acc_big');
      expect(typeof read?.createdAt).toBe('number');
      expect(read?.createdAt).toBe(big);
    });
  });

  describe('keys', () => {
    it('finds a key by hash with its account', async () => {
      const acc = await sut.account('acc_a');
      const k = await sut.key('acc_a', 'hash_1');
      await sut.key('acc_a', 'hash_2', 'publishable');
      const found = await sut.store.accounts.findKeyByHash('hash_1');
      expect(found).toEqual({ key: k, hash: 'hash_1', account: acc });
      expect(found?.key.allowedOrigins).toEqual(['https://a.example', "https://o'k.example"]);
      expect(typeof found?.key.createdAt).toBe('number');
      expect(found?.key.revokedAt).toBeNull();
      expect((await sut.store.accounts.findKeyByHash('hash_2'))?.key.kind).toBe('publishable');
    });

    it('answers undefined for unknown hashes, hostile ones included', async () => {
      await sut.account('acc_a');
      await sut.key('acc_a', 'hash_1');
      for (const h of [...HOSTILE, 'hash_%', 'hash__', 'HASH_1', '']) expect(await sut.store.accounts.findKeyByHash(h)).toBeUndefined();
    });

    it('lists keys, all or per account', async () => {
      await sut.account('acc_a');
      await sut.account('acc_b');
      const k1 = await sut.key('acc_a', 'h1');
      const k2 = await sut.key('acc_b', 'h2');
      const k3 = await sut.key('acc_a', 'h3');
      expect(await sut.store.accounts.listKeys('acc_a')).toEqual([k1, k3]);
      expect(await sut.store.accounts.listKeys('acc_b')).toEqual([k2]);
      expect((await sut.store.accounts.listKeys()).map((k) => k.id).sort()).toEqual([k1.id, k2.id, k3.id].sort());
      expect(await sut.store.accounts.listKeys('acc_%')).toEqual([]);
      expect(await sut.store.accounts.getKey(k2.id)).toEqual(k2);
      for (const id of ['key_missing', "' or 1=1 --", 'key_%']) expect(await sut.store.accounts.getKey(id)).toBeUndefined();
    });

    it('revokes: the key is still found, with revokedAt; a second revoke keeps the first time', async () => {
      await sut.account('acc_a');
      const k = await sut.key('acc_a', 'h1');
      expect(await sut.store.accounts.revokeKey(k.id, T0 + 5)).toBe(true);
      expect((await sut.store.accounts.findKeyByHash('h1'))?.key.revokedAt).toBe(T0 + 5);
      expect(await sut.store.accounts.revokeKey(k.id, T0 + 9)).toBe(true);
      expect((await sut.store.accounts.findKeyByHash('h1'))?.key.revokedAt).toBe(T0 + 5);
      expect((await sut.store.accounts.listKeys('acc_a'))[0]?.revokedAt).toBe(T0 + 5);
    });

    it('answers false when revoking an unknown key', async () => {
      expect(await sut.store.accounts.revokeKey('key_missing', T0)).toBe(false);
      expect(await sut.store.accounts.revokeKey("' or 1=1 --", T0)).toBe(false);
    });

    it('replaces allowed origins; the key is otherwise unchanged and found with them; unknown keys answer undefined', async () => {
      await sut.account('acc_a');
      const k = await sut.key('acc_a', 'h1', 'publishable');
      const other = await sut.key('acc_a', 'h2', 'publishable');
      const origins = ['https://a.example', "https://o'k.example", '*'];
      expect(await sut.store.accounts.setKeyOrigins(k.id, origins)).toEqual({ ...k, allowedOrigins: origins });
      expect((await sut.store.accounts.findKeyByHash('h1'))?.key.allowedOrigins).toEqual(origins);
      expect(await sut.store.accounts.listKeys('acc_a')).toEqual([{ ...k, allowedOrigins: origins }, other]);
      expect((await sut.store.accounts.setKeyOrigins(k.id, []))?.allowedOrigins).toEqual([]);
      expect(await sut.store.accounts.setKeyOrigins('key_missing', origins)).toBeUndefined();
      expect(await sut.store.accounts.setKeyOrigins("' or 1=1 --", origins)).toBeUndefined();
      expect((await sut.store.accounts.listKeys('acc_a')).map((x) => x.allowedOrigins)).toEqual([[], other.allowedOrigins]);
    });

    it('refuses a duplicate hash with StoreRejectedError', async () => {
      await sut.account('acc_a');
      await sut.key('acc_a', 'h1');
      await expect(sut.key('acc_a', 'h1')).rejects.toBeInstanceOf(StoreRejectedError);
      expect(await sut.store.accounts.listKeys('acc_a')).toHaveLength(1);
    });
  });
}
