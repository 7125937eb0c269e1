import type { AuditTrail, AuditOrigin } from '../audit/trail.js';
import { ROLES, type Role } from '../event/account.js';
import type { Store } from '../storage/store.js';
import type { MemberRecord, UserRecord } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';
import type { Mailer } from './mailer.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';

export type MembersFailure = {
  readonly ok: false;
  readonly code: 'NOT_FOUND' | 'INVALID_REQUEST' | 'CONFLICT' | 'FORBIDDEN' | 'UNAUTHORIZED' | 'UNAVAILABLE';
  readonly message: string;
};
export type MembersResult<T> = { readonly ok: true; readonly value: T } | MembersFailure;

/** What the team classes share: the store, the audit trail, the clock, and how links reach people. */
export interface TeamDeps {
  readonly store: Store;
  readonly audit: AuditTrail;
  readonly clock: Clock;
  /** VIGIL_PUBLIC_URL: the base of the links people are sent; unset, links are relative. */
  readonly publicUrl?: string;
  /** Present when VIGIL_SMTP_URL is set: links are mailed instead of returned. */
  readonly mailer?: Mailer;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,63}$/;

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/** The email as the store keeps it (trimmed, lower case), or undefined when it is not an address. */
export function normalEmail(text: string): string | undefined {
  const email = text.trim().toLowerCase();
  return EMAIL.test(email) ? email : undefined;
}

export const fail = (code: MembersFailure['code'], message: string): MembersFailure => ({ ok: false, code, message });

/** The role the origin acts with in its account: the operator as an owner, a member with theirs, anyone else with none. */
export async function actingRole(store: Store, origin: AuditOrigin): Promise<Role | undefined> {
  if (origin.actor.kind === 'operator') return 'owner';
  if (origin.actor.kind !== 'member' || origin.actor.id === null) return undefined;
  return (await store.members.getMember(origin.accountId, origin.actor.id))?.role;
}

/** An owner is needed to make someone an owner or to change an owner. */
export const ownerOnly = (acting: Role | undefined, before: Role | undefined, after: Role | undefined): boolean =>
  acting !== 'owner' && (before === 'owner' || after === 'owner');

/** The origin of something a person does themselves outside any session (accepting an invitation, a reset). */
export const personOrigin = (accountId: string, user: UserRecord, ip: string | null, userAgent: string | null): AuditOrigin => ({
  accountId,
  actor: { kind: 'member', id: user.id, label: user.email },
  ip,
  userAgent,
});

/** People and their memberships, shared by the CLI, the API and the dashboard. */
export class Members {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  /** A new person with this password (checked against the policy). */
  async createPerson(email: string, name: string | undefined, password: string): Promise<MembersResult<UserRecord>> {
    const problem = passwordProblem(password, email);
    if (problem) return fail('INVALID_REQUEST', problem);
    const now = this.clock.now();
    const user = await this.store.members.createUser({
      id: newId('usr', now),
      email,
      name: name?.trim() || (email.split('@')[0] ?? email),
      passwordHash: await hashPassword(password),
      totpSecret: null,
      totpEnabledAt: null,
      totpLastStep: null,
      recoveryHashes: [],
      createdAt: now,
      passwordChangedAt: now,
      lastSignInAt: null,
    });
    return { ok: true, value: user };
  }

  /**
   * Adds a person to an account with a role, creating them (with this password) when no one has
   * their email yet; a person who exists keeps their password.
   */
  async add(
    origin: AuditOrigin,
    input: { readonly email: string; readonly name?: string; readonly role: string; readonly password?: string },
  ): Promise<MembersResult<{ user: UserRecord; member: MemberRecord; created: boolean }>> {
    const email = normalEmail(input.email);
    if (email === undefined) return fail('INVALID_REQUEST', `"${input.email}" is not an email address.`);
    if (!isRole(input.role)) return fail('INVALID_REQUEST', `Unknown role "${input.role}"; roles: ${ROLES.join(', ')}.`);
    if (!(await this.store.accounts.getAccount(origin.accountId))) return fail('NOT_FOUND', `No account ${origin.accountId}.`);
    let user = await this.store.members.findUserByEmail(email);
    const created = user === undefined;
    if (user === undefined) {
      if (input.password === undefined) return fail('INVALID_REQUEST', 'A new person needs a password.');
      const person = await this.createPerson(email, input.name, input.password);
      if (!person.ok) return person;
      user = person.value;
    }
    if (await this.store.members.getMember(origin.accountId, user.id)) return fail('CONFLICT', `${email} is already a member of account ${origin.accountId}.`);
    const member = await this.join(origin, user, input.role, { action: 'member.added', details: { email, new_person: created } });
    return { ok: true, value: { user, member, created } };
  }

  /** Makes the person a member of the origin's account and records it (member.added, invitation.accepted). */
  async join(
    origin: AuditOrigin,
    user: UserRecord,
    role: Role,
    entry: { readonly action: string; readonly details: Readonly<Record<string, unknown>> },
  ): Promise<MemberRecord> {
    const member: MemberRecord = { accountId: origin.accountId, userId: user.id, role, createdAt: this.clock.now(), createdBy: origin.actor.label };
    await this.store.members.addMember(member);
    await this.audit.record(origin, {
      action: entry.action,
      target: { kind: 'member', id: user.id },
      changes: { role: { before: null, after: role } },
      details: entry.details,
    });
    return member;
  }

  /** Refuses to leave the account without an owner: `userId` is its only one. */
  private async lastOwner(accountId: string, userId: string): Promise<boolean> {
    const owners = (await this.store.members.listMembers(accountId)).filter((m) => m.member.role === 'owner');
    return owners.length === 1 && owners[0]?.user.id === userId;
  }

  /** Changes a member's role. Only owners grant or take the owner role; the last owner keeps it. */
  async changeRole(origin: AuditOrigin, userId: string, role: string): Promise<MembersResult<{ user: UserRecord; member: MemberRecord }>> {
    if (!isRole(role)) return fail('INVALID_REQUEST', `Unknown role "${role}"; roles: ${ROLES.join(', ')}.`);
    const [member, user] = await Promise.all([this.store.members.getMember(origin.accountId, userId), this.store.members.getUser(userId)]);
    if (!member || !user) return fail('NOT_FOUND', `No member ${userId} in this account.`);
    if (ownerOnly(await actingRole(this.store, origin), member.role, role)) return fail('FORBIDDEN', 'Only an owner can grant or take the owner role.');
    if (member.role === role) return { ok: true, value: { user, member } };
    if (member.role === 'owner' && (await this.lastOwner(origin.accountId, userId)))
      return fail('CONFLICT', 'This is the account’s last owner: make someone else an owner first.');
    const updated = await this.store.members.setMemberRole(origin.accountId, userId, role);
    if (!updated) return fail('NOT_FOUND', `No member ${userId} in this account.`);
    await this.audit.record(origin, {
      action: 'member.role_changed',
      target: { kind: 'member', id: userId },
      changes: { role: { before: member.role, after: role } },
      details: { email: user.email },
    });
    return { ok: true, value: { user, member: updated } };
  }

  /** Removes a member from the account and ends their sessions in it. */
  async remove(origin: AuditOrigin, userId: string): Promise<MembersResult<{ sessionsRevoked: number }>> {
    const [member, user] = await Promise.all([this.store.members.getMember(origin.accountId, userId), this.store.members.getUser(userId)]);
    if (!member || !user) return fail('NOT_FOUND', `No member ${userId} in this account.`);
    if (ownerOnly(await actingRole(this.store, origin), member.role, undefined)) return fail('FORBIDDEN', 'Only an owner can remove an owner.');
    if (member.role === 'owner' && (await this.lastOwner(origin.accountId, userId)))
      return fail('CONFLICT', 'This is the account’s last owner: make someone else an owner first.');
    const now = this.clock.now();
    const sessionsRevoked = (await this.store.members.listSessions(userId, now, origin.accountId)).length;
    if (!(await this.store.members.removeMember(origin.accountId, userId, now))) return fail('NOT_FOUND', `No member ${userId} in this account.`);
    await this.audit.record(origin, {
      action: 'member.removed',
      target: { kind: 'member', id: userId },
      changes: { role: { before: member.role, after: null } },
      details: { email: user.email, sessions_revoked: sessionsRevoked },
    });
    return { ok: true, value: { sessionsRevoked } };
  }

  /** Ends one of a member's sessions in the origin's account (their own, or anyone's for an admin). */
  async revokeSession(origin: AuditOrigin, userId: string, sessionId: string): Promise<MembersResult<undefined>> {
    const now = this.clock.now();
    const session = (await this.store.members.listSessions(userId, now, origin.accountId)).find((s) => s.id === sessionId);
    if (!session || !(await this.store.members.revokeSession(userId, sessionId, now)))
      return fail('NOT_FOUND', `No live session ${sessionId} of ${userId} in this account.`);
    await this.audit.record(origin, { action: 'session.revoked', target: { kind: 'session', id: sessionId }, details: { user_id: userId } });
    return { ok: true, value: undefined };
  }

  /** A person changes their own password: the current one proves it is them; their other sessions end. */
  async changePassword(
    origin: AuditOrigin,
    input: { readonly userId: string; readonly currentPassword: string; readonly newPassword: string; readonly keepSessionId: string },
  ): Promise<MembersResult<{ sessionsRevoked: number }>> {
    const user = await this.store.members.getUser(input.userId);
    if (!user) return fail('NOT_FOUND', 'No such person.');
    if (!(await verifyPassword(input.currentPassword, user.passwordHash))) return fail('UNAUTHORIZED', 'The current password is wrong.');
    const problem = passwordProblem(input.newPassword, user.email);
    if (problem) return fail('INVALID_REQUEST', problem);
    const now = this.clock.now();
    await this.store.members.updateUser(user.id, { passwordHash: await hashPassword(input.newPassword), passwordChangedAt: now });
    let sessionsRevoked = 0;
    for (const session of await this.store.members.listSessions(user.id, now))
      if (session.id !== input.keepSessionId && (await this.store.members.revokeSession(user.id, session.id, now))) sessionsRevoked++;
    await this.audit.record(origin, {
      action: 'password.changed',
      target: { kind: 'member', id: user.id },
      changes: { password: { before: '[set]', after: '[changed]' } },
      details: { via: 'self', sessions_revoked: sessionsRevoked },
    });
    return { ok: true, value: { sessionsRevoked } };
  }
}
