import type { AuditTrail, AuditOrigin } from '../audit/trail.js';
import { ROLES, type Role } from '../event/account.js';
import type { Store } from '../storage/store.js';
import type { MemberRecord, UserRecord } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { newId } from '../util/ids.js';
import { hashPassword, passwordProblem } from './passwords.js';

export type MembersResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: 'NOT_FOUND' | 'INVALID_REQUEST' | 'CONFLICT'; readonly message: string };

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,63}$/;

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/** People and their memberships, shared by the CLI, the API and the dashboard. */
export class Members {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  /**
   * Adds a person to an account with a role, creating them (with this password) when no one has
   * their email yet; a person who exists keeps their password.
   */
  async add(
    origin: AuditOrigin,
    input: { readonly email: string; readonly name?: string; readonly role: string; readonly password?: string },
  ): Promise<MembersResult<{ user: UserRecord; member: MemberRecord; created: boolean }>> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) return { ok: false, code: 'INVALID_REQUEST', message: `"${input.email}" is not an email address.` };
    if (!isRole(input.role)) return { ok: false, code: 'INVALID_REQUEST', message: `Unknown role "${input.role}"; roles: ${ROLES.join(', ')}.` };
    if (!(await this.store.accounts.getAccount(origin.accountId))) return { ok: false, code: 'NOT_FOUND', message: `No account ${origin.accountId}.` };
    const now = this.clock.now();
    let user = await this.store.members.findUserByEmail(email);
    const created = user === undefined;
    if (user === undefined) {
      if (input.password === undefined) return { ok: false, code: 'INVALID_REQUEST', message: 'A new person needs a password.' };
      const problem = passwordProblem(input.password, email);
      if (problem) return { ok: false, code: 'INVALID_REQUEST', message: problem };
      user = await this.store.members.createUser({
        id: newId('usr', now),
        email,
        name: input.name ?? email.split('@')[0] ?? email,
        passwordHash: await hashPassword(input.password),
        totpSecret: null,
        totpEnabledAt: null,
        totpLastStep: null,
        recoveryHashes: [],
        createdAt: now,
        passwordChangedAt: now,
        lastSignInAt: null,
      });
    }
    if (await this.store.members.getMember(origin.accountId, user.id))
      return { ok: false, code: 'CONFLICT', message: `${email} is already a member of account ${origin.accountId}.` };
    const member: MemberRecord = { accountId: origin.accountId, userId: user.id, role: input.role, createdAt: now, createdBy: origin.actor.label };
    await this.store.members.addMember(member);
    await this.audit.record(origin, {
      action: 'member.added',
      target: { kind: 'member', id: user.id },
      changes: { role: { before: null, after: member.role } },
      details: { email, new_person: created },
    });
    return { ok: true, value: { user, member, created } };
  }
}
