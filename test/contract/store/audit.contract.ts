import { describe, expect, it } from 'vitest';
import type { AuditEntry, AuditFilter } from '../../../src/storage/types.js';
import { nextId, T0 } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

const entry = (accountId: string, over: Partial<AuditEntry> = {}): AuditEntry => ({
  id: nextId('aud'),
  accountId,
  at: T0,
  actor: { kind: 'member', id: 'usr_1', label: 'ada@example.com' },
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0',
  action: 'member.role.change',
  targetKind: 'member',
  targetId: 'usr_2',
  changes: { role: { before: 'viewer', after: 'admin' } },
  details: { note: 'żółw ✓', nested: [1, null] },
  ...over,
});

/** The contract of AuditStore. */
export function auditContract(sut: StoreContext): void {
  describe('audit', () => {
    /** Every page of a listing, checking page sizes and that the cursor moves strictly down. */
    async function allPages(accountId: string, filter: AuditFilter, limit: number): Promise<AuditEntry[]> {
      const out: AuditEntry[] = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 100; guard++) {
        const page = await sut.store.audit.list(accountId, filter, limit, cursor);
        expect(page.items.length).toBeLessThanOrEqual(limit);
        out.push(...page.items);
        if (page.nextCursor === null) return out;
        expect(page.items.length).toBe(limit);
        if (cursor !== undefined) expect(page.nextCursor < cursor).toBe(true);
        cursor = page.nextCursor;
      }
      throw new Error('pagination did not end');
    }

    it('appends entries and lists them newest first, every field as written', async () => {
      const first = entry('acc_a', { at: T0 });
      const second = entry('acc_a', {
        at: T0 + 1,
        actor: { kind: 'anonymous', id: null, label: null },
        ip: null,
        userAgent: null,
        targetKind: null,
        targetId: null,
        changes: {},
        details: {},
      });
      await sut.store.audit.append(first);
      await sut.store.audit.append(second);
      expect(await sut.store.audit.list('acc_a', {}, 10)).toEqual({ items: [second, first], nextCursor: null });
    });

    it('filters by actor, exact action, action prefix, target and time', async () => {
      const entries = [
        entry('acc_a', { at: T0, action: 'alert.status.change', actor: { kind: 'member', id: 'usr_1', label: 'ada' }, targetId: 'alr_1' }),
        entry('acc_a', { at: T0 + 10, action: 'alert.assign', actor: { kind: 'key', id: 'key_1', label: 'vgl_sk_ab' }, targetId: 'alr_1' }),
        entry('acc_a', { at: T0 + 20, action: 'alerts.export', actor: { kind: 'operator', id: 'operator', label: 'cli' }, targetId: null }),
        entry('acc_a', { at: T0 + 30, action: 'alert', actor: { kind: 'member', id: 'usr_1', label: 'ada' }, targetId: 'alr_2' }),
        entry('acc_a', { at: T0 + 40, action: 'member.invite', actor: { kind: 'member', id: 'usr_2', label: 'bob' }, targetId: 'usr_3' }),
        entry('acc_a', { at: T0 + 50, action: 'alertXstatus', actor: { kind: 'member', id: 'usr_1', label: 'ada' }, targetId: 'alr_1' }),
      ];
      for (const e of entries) await sut.store.audit.append(e);
      const actions = async (filter: AuditFilter): Promise<string[]> => (await sut.store.audit.list('acc_a', filter, 100)).items.map((e) => e.action);
      expect(await actions({ actorId: 'usr_1' })).toEqual(['alertXstatus', 'alert', 'alert.status.change']);
      expect(await actions({ actorId: 'operator' })).toEqual(['alerts.export']);
      expect(await actions({ action: 'alert.assign' })).toEqual(['alert.assign']);
      expect(await actions({ action: 'alert' })).toEqual(['alert']);
      expect(await actions({ action: 'alert.' })).toEqual(['alert.assign', 'alert.status.change']);
      expect(await actions({ action: 'alert.status.' })).toEqual(['alert.status.change']);
      expect(await actions({ action: 'alert_' })).toEqual([]);
      expect(await actions({ action: '%.' })).toEqual([]);
      expect(await actions({ targetId: 'alr_1' })).toEqual(['alertXstatus', 'alert.assign', 'alert.status.change']);
      expect(await actions({ since: T0 + 20 })).toEqual(['alertXstatus', 'member.invite', 'alert', 'alerts.export']);
      expect(await actions({ until: T0 + 20 })).toEqual(['alert.assign', 'alert.status.change']);
      expect(await actions({ since: T0 + 10, until: T0 + 40 })).toEqual(['alert', 'alerts.export', 'alert.assign']);
      expect(await actions({ actorId: 'usr_1', action: 'alert.', targetId: 'alr_1', since: T0, until: T0 + 51 })).toEqual(['alert.status.change']);
      expect(await actions({ actorId: 'usr_nobody' })).toEqual([]);
    });

    it('pages through every matching entry exactly once, newest first', async () => {
      const written: AuditEntry[] = [];
      for (let i = 0; i < 23; i++) written.push(entry('acc_a', { at: T0 + i, action: i % 3 === 0 ? 'key.create' : 'alert.status.change' }));
      for (const e of written) await sut.store.audit.append(e);
      const newestFirst = [...written].reverse();
      for (const limit of [1, 5, 22, 23, 24]) expect(await allPages('acc_a', {}, limit)).toEqual(newestFirst);
      expect(await allPages('acc_a', { action: 'alert.' }, 4)).toEqual(newestFirst.filter((e) => e.action === 'alert.status.change'));
      const first = await sut.store.audit.list('acc_a', {}, 23);
      expect(first.nextCursor).toBeNull();
    });

    it('prune removes only the given account’s entries older than the cut-off', async () => {
      await sut.store.audit.append(entry('acc_a', { at: T0 }));
      await sut.store.audit.append(entry('acc_a', { at: T0 + 5 }));
      const kept = entry('acc_a', { at: T0 + 10 });
      await sut.store.audit.append(kept);
      const other = entry('acc_b', { at: T0 });
      await sut.store.audit.append(other);
      expect(await sut.store.audit.prune('acc_a', T0 + 10)).toBe(2);
      expect((await sut.store.audit.list('acc_a', {}, 10)).items).toEqual([kept]);
      expect((await sut.store.audit.list('acc_b', {}, 10)).items).toEqual([other]);
      expect(await sut.store.audit.prune('acc_a', T0 + 10)).toBe(0);
    });

    it("one account never sees another's entries, whatever the filter or cursor", async () => {
      const mine = entry('acc_a', { action: 'member.invite', targetId: 'usr_3' });
      const theirs = entry('acc_b', { action: 'member.invite', targetId: 'usr_3' });
      const unowned = entry('', { action: 'auth.sign_in.failure', actor: { kind: 'anonymous', id: null, label: null }, targetId: null });
      await sut.store.audit.append(mine);
      await sut.store.audit.append(theirs);
      await sut.store.audit.append(unowned);
      expect((await sut.store.audit.list('acc_a', {}, 10)).items).toEqual([mine]);
      expect((await sut.store.audit.list('acc_b', { targetId: 'usr_3', action: 'member.' }, 10)).items).toEqual([theirs]);
      expect((await sut.store.audit.list('acc_a', {}, 10, theirs.id)).items).toEqual([mine]);
      expect((await sut.store.audit.list('', {}, 10)).items).toEqual([unowned]);
      expect((await sut.store.audit.list('acc_c', {}, 10)).items).toEqual([]);
      expect((await sut.store.audit.list('acc\u0000', {}, 10)).items).toEqual([]);
    });
  });
}
