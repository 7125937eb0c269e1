import { describe, expect, it } from 'vitest';
import { StoreRejectedError } from '../../../src/storage/store.js';
import type { MemberRecord, MemberSession, MemberToken, SsoConfig, UserRecord } from '../../../src/storage/types.js';
import { nextId, T0 } from '../store-fixtures.js';
import type { StoreContext } from './context.js';

const user = (id: string, email: string, over: Partial<UserRecord> = {}): UserRecord => ({
  id,
  email,
  name: `name of ${id}`,
  passwordHash: `hash of ${id}`,
  totpSecret: null,
  totpEnabledAt: null,
  totpLastStep: null,
  recoveryHashes: [],
  createdAt: T0,
  passwordChangedAt: null,
  lastSignInAt: null,
  ...over,
});

const member = (accountId: string, userId: string, createdAt = T0, role: MemberRecord['role'] = 'analyst'): MemberRecord => ({
  accountId,
  userId,
  role,
  createdAt,
  createdBy: null,
});

const token = (tokenHash: string, over: Partial<MemberToken> = {}): MemberToken => ({
  tokenHash,
  id: over.id ?? nextId('inv'),
  purpose: 'invite',
  accountId: 'acc_a',
  userId: null,
  email: 'invited@example.com',
  role: 'viewer',
  data: { note: 'żółw ✓' },
  createdBy: 'usr_owner',
  createdAt: T0,
  expiresAt: T0 + 1000,
  usedAt: null,
  ...over,
});

const session = (id: string, accountId: string, userId: string, over: Partial<MemberSession> = {}): MemberSession => ({
  id,
  idHash: `hash of ${id}`,
  accountId,
  userId,
  csrfToken: `csrf of ${id}`,
  method: 'password+totp',
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0',
  createdAt: T0,
  lastSeenAt: T0,
  expiresAt: T0 + 1000,
  revokedAt: null,
  ...over,
});

const sso = (accountId: string, over: Partial<SsoConfig> = {}): SsoConfig => ({
  accountId,
  issuer: 'https://idp.example',
  clientId: 'client',
  clientSecret: 'secret',
  allowedDomains: ['example.com'],
  roleClaim: 'groups',
  roleMap: { admins: 'admin' },
  defaultRole: 'viewer',
  updatedAt: T0,
  ...over,
});

/** The contract of MemberStore. */
export function membersContract(sut: StoreContext): void {
  describe('members', () => {
    it('users: stored with a lower-case email, found by email in any case, one per email', async () => {
      const created = await sut.store.members.createUser(user('usr_1', 'Ada@Example.COM'));
      expect(created.email).toBe('ada@example.com');
      expect(await sut.store.members.getUser('usr_1')).toEqual(created);
      expect(await sut.store.members.findUserByEmail('ADA@example.com')).toEqual(created);
      expect(await sut.store.members.findUserByEmail('ada@example.com')).toEqual(created);
      expect(await sut.store.members.findUserByEmail('bob@example.com')).toBeUndefined();
      expect(await sut.store.members.getUser('usr_2')).toBeUndefined();
      await expect(sut.store.members.createUser(user('usr_2', 'ada@EXAMPLE.com'))).rejects.toBeInstanceOf(StoreRejectedError);
      await expect(sut.store.members.createUser(user('usr_1', 'other@example.com'))).rejects.toBeInstanceOf(StoreRejectedError);
      expect(await sut.store.members.findUserByEmail('other@example.com')).toBeUndefined();
    });

    it('updateUser changes only the given fields; a new TOTP secret starts the replay guard over', async () => {
      await sut.store.members.createUser(user('usr_1', 'ada@example.com'));
      expect(await sut.store.members.updateUser('usr_nobody', { name: 'x' })).toBeUndefined();
      const renamed = await sut.store.members.updateUser('usr_1', { name: 'Ada L.', lastSignInAt: T0 + 5 });
      expect(renamed).toEqual(user('usr_1', 'ada@example.com', { name: 'Ada L.', lastSignInAt: T0 + 5 }));
      expect(await sut.store.members.updateUser('usr_1', {})).toEqual(renamed);
      const enrolled = await sut.store.members.updateUser('usr_1', {
        totpSecret: 'JBSWY3DPEHPK3PXP',
        totpEnabledAt: T0 + 6,
        recoveryHashes: ['r1', 'r2'],
        passwordHash: null,
        passwordChangedAt: T0 + 6,
      });
      expect(enrolled).toMatchObject({
        name: 'Ada L.',
        totpSecret: 'JBSWY3DPEHPK3PXP',
        totpEnabledAt: T0 + 6,
        recoveryHashes: ['r1', 'r2'],
        passwordHash: null,
        passwordChangedAt: T0 + 6,
        lastSignInAt: T0 + 5,
      });
      expect(await sut.store.members.acceptTotpStep('usr_1', 100)).toBe(true);
      expect((await sut.store.members.getUser('usr_1'))?.totpLastStep).toBe(100);
      const reenrolled = await sut.store.members.updateUser('usr_1', { totpSecret: 'NEWSECRET' });
      expect(reenrolled?.totpLastStep).toBeNull();
      expect(await sut.store.members.acceptTotpStep('usr_1', 50)).toBe(true);
    });

    it('acceptTotpStep accepts a step once and refuses it and every earlier step afterwards', async () => {
      await sut.store.members.createUser(user('usr_1', 'ada@example.com'));
      await sut.store.members.createUser(user('usr_2', 'bob@example.com'));
      expect(await sut.store.members.acceptTotpStep('usr_1', 1000)).toBe(true);
      expect(await sut.store.members.acceptTotpStep('usr_1', 1000)).toBe(false);
      expect(await sut.store.members.acceptTotpStep('usr_1', 999)).toBe(false);
      expect(await sut.store.members.acceptTotpStep('usr_1', 1001)).toBe(true);
      expect(await sut.store.members.acceptTotpStep('usr_1', 1000)).toBe(false);
      expect(await sut.store.members.acceptTotpStep('usr_2', 1000)).toBe(true);
      expect(await sut.store.members.acceptTotpStep('usr_nobody', 5)).toBe(false);
      const both = await Promise.all([sut.store.members.acceptTotpStep('usr_2', 2000), sut.store.members.acceptTotpStep('usr_2', 2000)]);
      expect(both.filter(Boolean)).toHaveLength(1);
    });

    it('useRecoveryCode removes a code hash once; concurrent uses of one code succeed once', async () => {
      await sut.store.members.createUser(user('usr_1', 'ada@example.com', { recoveryHashes: ['r1', 'r2', 'r3'] }));
      await sut.store.members.createUser(user('usr_2', 'bob@example.com', { recoveryHashes: ['r1'] }));
      expect(await sut.store.members.useRecoveryCode('usr_1', 'r2')).toBe(true);
      expect(await sut.store.members.useRecoveryCode('usr_1', 'r2')).toBe(false);
      expect(await sut.store.members.useRecoveryCode('usr_1', 'nope')).toBe(false);
      expect(await sut.store.members.useRecoveryCode('usr_nobody', 'r1')).toBe(false);
      expect((await sut.store.members.getUser('usr_1'))?.recoveryHashes).toEqual(['r1', 'r3']);
      const both = await Promise.all([sut.store.members.useRecoveryCode('usr_1', 'r1'), sut.store.members.useRecoveryCode('usr_1', 'r1')]);
      expect(both.filter(Boolean)).toHaveLength(1);
      expect((await sut.store.members.getUser('usr_1'))?.recoveryHashes).toEqual(['r3']);
      expect((await sut.store.members.getUser('usr_2'))?.recoveryHashes).toEqual(['r1']);
    });

    it('memberships: added once, listed with their users oldest first, per account; roles change; membershipsOf spans accounts', async () => {
      for (const [id, email] of [
        ['usr_1', 'ada@example.com'],
        ['usr_2', 'bob@example.com'],
        ['usr_3', 'cyd@example.com'],
      ] as const)
        await sut.store.members.createUser(user(id, email));
      await sut.store.members.addMember(member('acc_a', 'usr_2', T0 + 2));
      await sut.store.members.addMember(member('acc_a', 'usr_1', T0 + 1, 'owner'));
      await sut.store.members.addMember(member('acc_b', 'usr_1', T0 + 3, 'viewer'));
      await sut.store.members.addMember(member('acc_b', 'usr_3', T0 + 4));
      await expect(sut.store.members.addMember(member('acc_a', 'usr_1', T0 + 9))).rejects.toBeInstanceOf(StoreRejectedError);

      const listed = await sut.store.members.listMembers('acc_a');
      expect(listed.map((m) => [m.member.userId, m.member.role, m.user.email])).toEqual([
        ['usr_1', 'owner', 'ada@example.com'],
        ['usr_2', 'analyst', 'bob@example.com'],
      ]);
      expect(listed[0]).toEqual({ member: member('acc_a', 'usr_1', T0 + 1, 'owner'), user: user('usr_1', 'ada@example.com') });
      expect((await sut.store.members.listMembers('acc_b')).map((m) => m.member.userId)).toEqual(['usr_1', 'usr_3']);
      expect(await sut.store.members.listMembers('acc_c')).toEqual([]);

      expect(await sut.store.members.membershipsOf('usr_1')).toEqual([member('acc_a', 'usr_1', T0 + 1, 'owner'), member('acc_b', 'usr_1', T0 + 3, 'viewer')]);
      expect(await sut.store.members.membershipsOf('usr_nobody')).toEqual([]);
      expect(await sut.store.members.getMember('acc_a', 'usr_3')).toBeUndefined();

      expect(await sut.store.members.setMemberRole('acc_b', 'usr_1', 'admin')).toEqual(member('acc_b', 'usr_1', T0 + 3, 'admin'));
      expect(await sut.store.members.getMember('acc_a', 'usr_1')).toEqual(member('acc_a', 'usr_1', T0 + 1, 'owner'));
      expect(await sut.store.members.setMemberRole('acc_a', 'usr_3', 'admin')).toBeUndefined();
      expect(await sut.store.members.getMember('acc_a', 'usr_3')).toBeUndefined();
    });

    it("removeMember ends the membership and revokes that person's sessions in that account only", async () => {
      await sut.store.members.createUser(user('usr_1', 'ada@example.com'));
      await sut.store.members.createUser(user('usr_2', 'bob@example.com'));
      await sut.store.members.addMember(member('acc_a', 'usr_1'));
      await sut.store.members.addMember(member('acc_b', 'usr_1'));
      await sut.store.members.addMember(member('acc_a', 'usr_2'));
      await sut.store.members.createSession(session('ses_1a', 'acc_a', 'usr_1'));
      await sut.store.members.createSession(session('ses_1b', 'acc_b', 'usr_1'));
      await sut.store.members.createSession(session('ses_2a', 'acc_a', 'usr_2'));

      expect(await sut.store.members.removeMember('acc_a', 'usr_1', T0 + 10)).toBe(true);
      expect(await sut.store.members.removeMember('acc_a', 'usr_1', T0 + 11)).toBe(false);
      expect(await sut.store.members.removeMember('acc_c', 'usr_2', T0 + 11)).toBe(false);
      expect(await sut.store.members.getMember('acc_a', 'usr_1')).toBeUndefined();
      expect(await sut.store.members.getMember('acc_b', 'usr_1')).toBeDefined();
      expect(await sut.store.members.findSession('hash of ses_1a', T0 + 20)).toBeUndefined();
      expect(await sut.store.members.findSession('hash of ses_1b', T0 + 20)).toEqual(session('ses_1b', 'acc_b', 'usr_1'));
      expect(await sut.store.members.findSession('hash of ses_2a', T0 + 20)).toEqual(session('ses_2a', 'acc_a', 'usr_2'));
      expect((await sut.store.members.listMembers('acc_a')).map((m) => m.member.userId)).toEqual(['usr_2']);
    });

    it('tokens: found by hash until used or expired; of two concurrent uses one wins', async () => {
      await sut.store.members.createToken(token('t_live', { id: 'inv_1', email: 'Invited@Example.com' }));
      await sut.store.members.createToken(token('t_used', { usedAt: T0 + 1 }));
      await sut.store.members.createToken(
        token('t_reset', { purpose: 'reset', accountId: null, userId: 'usr_1', email: null, role: null, expiresAt: T0 + 50 }),
      );
      await expect(sut.store.members.createToken(token('t_live'))).rejects.toBeInstanceOf(StoreRejectedError);
      await expect(sut.store.members.createToken(token('t_other', { id: 'inv_1' }))).rejects.toBeInstanceOf(StoreRejectedError);

      expect(await sut.store.members.findToken('t_live', T0)).toEqual(token('t_live', { id: 'inv_1', email: 'invited@example.com' }));
      expect(await sut.store.members.findToken('t_used', T0)).toBeUndefined();
      expect(await sut.store.members.findToken('t_reset', T0 + 49)).toMatchObject({
        purpose: 'reset',
        userId: 'usr_1',
        accountId: null,
        email: null,
        role: null,
      });
      expect(await sut.store.members.findToken('t_reset', T0 + 50)).toBeUndefined();
      expect(await sut.store.members.findToken('t_nope', T0)).toBeUndefined();

      expect(await sut.store.members.useToken('t_reset', T0 + 50)).toBe(false);
      expect(await sut.store.members.useToken('t_used', T0 + 2)).toBe(false);
      expect(await sut.store.members.useToken('t_nope', T0 + 2)).toBe(false);
      const both = await Promise.all([sut.store.members.useToken('t_live', T0 + 2), sut.store.members.useToken('t_live', T0 + 2)]);
      expect(both.filter(Boolean)).toHaveLength(1);
      expect(await sut.store.members.useToken('t_live', T0 + 3)).toBe(false);
      expect(await sut.store.members.findToken('t_live', T0 + 3)).toBeUndefined();
    });

    it('invitations: an account lists and revokes only its own unused, unexpired invitations', async () => {
      await sut.store.members.createToken(token('t_a1', { id: 'inv_a1' }));
      await sut.store.members.createToken(token('t_a2', { id: 'inv_a2' }));
      await sut.store.members.createToken(token('t_a_expired', { id: 'inv_a3', expiresAt: T0 + 5 }));
      await sut.store.members.createToken(token('t_a_used', { id: 'inv_a4', usedAt: T0 }));
      await sut.store.members.createToken(token('t_a_reset', { id: 'rst_a5', purpose: 'reset' }));
      await sut.store.members.createToken(token('t_b1', { id: 'inv_b1', accountId: 'acc_b' }));

      expect((await sut.store.members.listInvitations('acc_a', T0 + 5)).map((t) => t.id)).toEqual(['inv_a2', 'inv_a1']);
      expect((await sut.store.members.listInvitations('acc_b', T0 + 5)).map((t) => t.id)).toEqual(['inv_b1']);
      expect(await sut.store.members.listInvitations('acc_c', T0)).toEqual([]);

      expect(await sut.store.members.revokeInvitation('acc_a', 'inv_b1', T0 + 6)).toBe(false);
      expect(await sut.store.members.revokeInvitation('acc_b', 'inv_a1', T0 + 6)).toBe(false);
      expect(await sut.store.members.revokeInvitation('acc_a', 'rst_a5', T0 + 6)).toBe(false);
      expect(await sut.store.members.revokeInvitation('acc_a', 'inv_nope', T0 + 6)).toBe(false);
      expect(await sut.store.members.findToken('t_b1', T0 + 6)).toBeDefined();
      expect(await sut.store.members.revokeInvitation('acc_a', 'inv_a1', T0 + 6)).toBe(true);
      expect(await sut.store.members.revokeInvitation('acc_a', 'inv_a1', T0 + 7)).toBe(false);
      expect(await sut.store.members.findToken('t_a1', T0 + 7)).toBeUndefined();
      expect(await sut.store.members.useToken('t_a1', T0 + 7)).toBe(false);
      expect((await sut.store.members.listInvitations('acc_a', T0 + 7)).map((t) => t.id)).toEqual(['inv_a2']);
      expect((await sut.store.members.listInvitations('acc_b', T0 + 7)).map((t) => t.id)).toEqual(['inv_b1']);
    });

    it('sessions: found by cookie hash unless revoked or expired; listed newest first; touched', async () => {
      await sut.store.members.createSession(session('ses_old', 'acc_a', 'usr_1', { createdAt: T0 - 2, lastSeenAt: T0 - 2 }));
      await sut.store.members.createSession(
        session('ses_new', 'acc_b', 'usr_1', { createdAt: T0 - 1, lastSeenAt: T0 - 1, method: 'oidc', ip: null, userAgent: null }),
      );
      await sut.store.members.createSession(session('ses_short', 'acc_a', 'usr_1', { expiresAt: T0 + 10 }));
      await sut.store.members.createSession(session('ses_revoked', 'acc_a', 'usr_1', { revokedAt: T0 - 1 }));
      await sut.store.members.createSession(session('ses_other', 'acc_a', 'usr_2'));
      await expect(sut.store.members.createSession(session('ses_old', 'acc_a', 'usr_1', { idHash: 'another hash' }))).rejects.toBeInstanceOf(
        StoreRejectedError,
      );
      await expect(sut.store.members.createSession(session('ses_dup', 'acc_a', 'usr_1', { idHash: 'hash of ses_old' }))).rejects.toBeInstanceOf(
        StoreRejectedError,
      );

      expect(await sut.store.members.findSession('hash of ses_new', T0)).toEqual(
        session('ses_new', 'acc_b', 'usr_1', { createdAt: T0 - 1, lastSeenAt: T0 - 1, method: 'oidc', ip: null, userAgent: null }),
      );
      expect(await sut.store.members.findSession('hash of ses_short', T0 + 9)).toBeDefined();
      expect(await sut.store.members.findSession('hash of ses_short', T0 + 10)).toBeUndefined();
      expect(await sut.store.members.findSession('hash of ses_revoked', T0)).toBeUndefined();
      expect(await sut.store.members.findSession('ses_new', T0)).toBeUndefined();

      await sut.store.members.touchSession('ses_old', T0 + 3);
      expect((await sut.store.members.findSession('hash of ses_old', T0 + 3))?.lastSeenAt).toBe(T0 + 3);

      expect((await sut.store.members.listSessions('usr_1', T0)).map((s) => s.id)).toEqual(['ses_short', 'ses_new', 'ses_old']);
      expect((await sut.store.members.listSessions('usr_1', T0 + 10)).map((s) => s.id)).toEqual(['ses_new', 'ses_old']);
      expect((await sut.store.members.listSessions('usr_1', T0, 'acc_a')).map((s) => s.id)).toEqual(['ses_short', 'ses_old']);
      expect((await sut.store.members.listSessions('usr_2', T0)).map((s) => s.id)).toEqual(['ses_other']);
      expect(await sut.store.members.listSessions('usr_1', T0, 'acc_c')).toEqual([]);
    });

    it("revokeSession revokes only the owner's live session; revokeSessionsOf revokes per account or everywhere", async () => {
      await sut.store.members.createSession(session('ses_1a', 'acc_a', 'usr_1'));
      await sut.store.members.createSession(session('ses_1a2', 'acc_a', 'usr_1'));
      await sut.store.members.createSession(session('ses_1b', 'acc_b', 'usr_1'));
      await sut.store.members.createSession(session('ses_1c', 'acc_c', 'usr_1'));
      await sut.store.members.createSession(session('ses_2a', 'acc_a', 'usr_2'));
      await sut.store.members.createSession(session('ses_1_expired', 'acc_a', 'usr_1', { expiresAt: T0 + 1 }));

      expect(await sut.store.members.revokeSession('usr_2', 'ses_1a', T0 + 2)).toBe(false);
      expect(await sut.store.members.findSession('hash of ses_1a', T0 + 2)).toBeDefined();
      expect(await sut.store.members.revokeSession('usr_1', 'ses_1_expired', T0 + 2)).toBe(false);
      expect(await sut.store.members.revokeSession('usr_1', 'ses_nope', T0 + 2)).toBe(false);
      expect(await sut.store.members.revokeSession('usr_1', 'ses_1a', T0 + 2)).toBe(true);
      expect(await sut.store.members.revokeSession('usr_1', 'ses_1a', T0 + 3)).toBe(false);
      expect(await sut.store.members.findSession('hash of ses_1a', T0 + 3)).toBeUndefined();

      expect(await sut.store.members.revokeSessionsOf('usr_1', T0 + 4, 'acc_b')).toBe(1);
      expect(await sut.store.members.findSession('hash of ses_1b', T0 + 4)).toBeUndefined();
      expect((await sut.store.members.listSessions('usr_1', T0 + 4)).map((s) => s.id).sort()).toEqual(['ses_1a2', 'ses_1c']);
      expect(await sut.store.members.revokeSessionsOf('usr_1', T0 + 5)).toBe(2);
      expect(await sut.store.members.listSessions('usr_1', T0 + 5)).toEqual([]);
      expect(await sut.store.members.revokeSessionsOf('usr_1', T0 + 6)).toBe(0);
      expect(await sut.store.members.findSession('hash of ses_2a', T0 + 6)).toEqual(session('ses_2a', 'acc_a', 'usr_2'));
    });

    it('single sign-on settings: put twice replaces, per account; delete removes', async () => {
      expect(await sut.store.members.getSsoConfig('acc_a')).toBeUndefined();
      await sut.store.members.putSsoConfig(sso('acc_a'));
      await sut.store.members.putSsoConfig(sso('acc_b', { issuer: 'https://b.example' }));
      expect(await sut.store.members.getSsoConfig('acc_a')).toEqual(sso('acc_a'));
      const replaced = sso('acc_a', {
        issuer: 'https://other.example',
        clientSecret: 'rotated',
        allowedDomains: [],
        roleClaim: null,
        roleMap: {},
        defaultRole: null,
        updatedAt: T0 + 1,
      });
      await sut.store.members.putSsoConfig(replaced);
      expect(await sut.store.members.getSsoConfig('acc_a')).toEqual(replaced);
      expect(await sut.store.members.getSsoConfig('acc_b')).toEqual(sso('acc_b', { issuer: 'https://b.example' }));
      expect(await sut.store.members.deleteSsoConfig('acc_a')).toBe(true);
      expect(await sut.store.members.deleteSsoConfig('acc_a')).toBe(false);
      expect(await sut.store.members.getSsoConfig('acc_a')).toBeUndefined();
      expect(await sut.store.members.getSsoConfig('acc_b')).toBeDefined();
    });

    it('pruneExpired deletes tokens and sessions that ended before the cut-off', async () => {
      await sut.store.members.createToken(token('t_gone', { expiresAt: T0 + 5 }));
      await sut.store.members.createToken(token('t_kept', { expiresAt: T0 + 20 }));
      await sut.store.members.createSession(session('ses_expired', 'acc_a', 'usr_1', { expiresAt: T0 + 5 }));
      await sut.store.members.createSession(session('ses_revoked', 'acc_a', 'usr_1', { revokedAt: T0 + 5 }));
      await sut.store.members.createSession(session('ses_live', 'acc_a', 'usr_1'));
      expect(await sut.store.members.pruneExpired(T0 + 10)).toBe(3);
      expect(await sut.store.members.findToken('t_kept', T0)).toBeDefined();
      expect(await sut.store.members.findSession('hash of ses_live', T0)).toBeDefined();
      expect(await sut.store.members.pruneExpired(T0 + 10)).toBe(0);
    });

    it('lookups with a NUL character find nothing instead of failing', async () => {
      await sut.store.members.createUser(user('usr_1', 'ada@example.com'));
      expect(await sut.store.members.findUserByEmail('ada\u0000@example.com')).toBeUndefined();
      expect(await sut.store.members.getUser('usr_1\u0000')).toBeUndefined();
      expect(await sut.store.members.listMembers('acc\u0000')).toEqual([]);
      expect(await sut.store.members.findToken('t\u0000', T0)).toBeUndefined();
      expect(await sut.store.members.findSession('s\u0000', T0)).toBeUndefined();
    });
  });
}
