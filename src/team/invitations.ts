import type { AuditOrigin } from '../audit/trail.js';
import { ROLES, type Role } from '../event/account.js';
import type { MemberRecord, MemberToken, UserRecord } from '../storage/types.js';
import { HOUR_MS } from '../util/duration.js';
import { newId } from '../util/ids.js';
import { MailError } from './mailer.js';
import { actingRole, fail, isRole, Members, normalEmail, ownerOnly, personOrigin, type MembersResult, type TeamDeps } from './members.js';
import { verifyPassword } from './passwords.js';
import { dashboardLink, hashToken, issueToken, liveToken } from './tokens.js';

/** An invitation link works for 72 hours, once. */
export const INVITATION_TTL_MS = 72 * HOUR_MS;

export interface Invitation {
  readonly record: MemberToken;
  /** The link, unless it was mailed. */
  readonly link?: string;
  readonly emailed: boolean;
}

/** Invitations to join an account by a single-use link, mailed when SMTP is configured. */
export class Invitations {
  private readonly members: Members;

  constructor(private readonly deps: TeamDeps) {
    this.members = new Members(deps.store, deps.audit, deps.clock);
  }

  /** Invites an email to the origin's account with a role; only an owner (or the operator) invites an owner. */
  async invite(origin: AuditOrigin, input: { readonly email: string; readonly role: string }): Promise<MembersResult<Invitation>> {
    const { store, clock } = this.deps;
    const email = normalEmail(input.email);
    if (email === undefined) return fail('INVALID_REQUEST', `"${input.email}" is not an email address.`);
    if (!isRole(input.role)) return fail('INVALID_REQUEST', `Unknown role "${input.role}"; roles: ${ROLES.join(', ')}.`);
    const account = await store.accounts.getAccount(origin.accountId);
    if (!account) return fail('NOT_FOUND', `No account ${origin.accountId}.`);
    if (ownerOnly(await actingRole(store, origin), undefined, input.role)) return fail('FORBIDDEN', 'Only an owner can invite an owner.');
    const existing = await store.members.findUserByEmail(email);
    if (existing && (await store.members.getMember(origin.accountId, existing.id))) return fail('CONFLICT', `${email} is already a member of this account.`);
    const now = clock.now();
    const fields = {
      id: newId('tok', now),
      purpose: 'invite' as const,
      accountId: origin.accountId,
      userId: null,
      email,
      role: input.role,
      data: {},
      createdBy: origin.actor.label,
      createdAt: now,
      expiresAt: now + INVITATION_TTL_MS,
    };
    const token = await issueToken(store, fields);
    const link = dashboardLink(this.deps.publicUrl, 'accept', token);
    const record: MemberToken = { ...fields, tokenHash: hashToken(token), usedAt: null };
    if (this.deps.mailer) {
      try {
        await this.deps.mailer.send({
          to: email,
          subject: `You are invited to ${account.name} on Vigil`,
          text: [
            `${origin.actor.label ?? 'Someone'} invites you to join ${account.name} on Vigil as ${input.role}.`,
            '',
            `Accept within 72 hours: ${link}`,
            '',
            'If you did not expect this, ignore this mail.',
          ].join('\n'),
        });
      } catch (err) {
        if (!(err instanceof MailError)) throw err;
        await store.members.revokeInvitation(origin.accountId, fields.id, clock.now());
        return fail('UNAVAILABLE', `The invitation could not be mailed (${err.message}); nothing was sent.`);
      }
    }
    const emailed = this.deps.mailer !== undefined;
    await this.deps.audit.record(origin, {
      action: 'member.invited',
      target: { kind: 'invitation', id: fields.id },
      changes: { role: { before: null, after: input.role } },
      details: { email, emailed },
    });
    return { ok: true, value: emailed ? { record, emailed } : { record, link, emailed } };
  }

  /** Withdraws a pending invitation: its link stops working. */
  async revoke(origin: AuditOrigin, id: string): Promise<MembersResult<undefined>> {
    const pending = (await this.deps.store.members.listInvitations(origin.accountId, this.deps.clock.now())).find((i) => i.id === id);
    if (!pending || !(await this.deps.store.members.revokeInvitation(origin.accountId, id, this.deps.clock.now())))
      return fail('NOT_FOUND', `No pending invitation ${id}.`);
    await this.deps.audit.record(origin, {
      action: 'invitation.revoked',
      target: { kind: 'invitation', id },
      details: { email: pending.email, role: pending.role },
    });
    return { ok: true, value: undefined };
  }

  /** What an invitation link offers, for the page that accepts it; undefined when the link is not (or no longer) valid. */
  async describe(token: string): Promise<{ invitation: MemberToken; accountName: string; existingPerson: boolean } | undefined> {
    const invitation = await liveToken(this.deps.store, token, 'invite', this.deps.clock.now());
    if (!invitation?.accountId || !invitation.email) return undefined;
    const account = await this.deps.store.accounts.getAccount(invitation.accountId);
    if (!account) return undefined;
    const existing = await this.deps.store.members.findUserByEmail(invitation.email);
    return { invitation, accountName: account.name, existingPerson: existing !== undefined };
  }

  /**
   * Accepts an invitation: someone who has a password proves it is them with it, a new person
   * chooses one (policy-checked). The link is spent only once everything else holds.
   */
  async accept(
    token: string,
    input: { readonly name?: string; readonly password: string },
    from: { readonly ip: string | null; readonly userAgent: string | null },
  ): Promise<MembersResult<{ user: UserRecord; member: MemberRecord }>> {
    const { store, clock } = this.deps;
    const invitation = await liveToken(store, token, 'invite', clock.now());
    const accountId = invitation?.accountId;
    const email = invitation?.email;
    const role: Role | null | undefined = invitation?.role;
    if (!invitation || !accountId || !email || !role) return fail('NOT_FOUND', 'This invitation link is not valid: it was used, withdrawn or has expired.');
    let user = await store.members.findUserByEmail(email);
    const newPerson = user === undefined;
    if (user === undefined) {
      const created = await this.members.createPerson(email, input.name, input.password);
      if (!created.ok) return created;
      user = created.value;
    } else if (user.passwordHash === null) {
      return fail(
        'FORBIDDEN',
        `${email} signs in only through single sign-on, so there is no password to accept with: the operator adds them with vigil members add.`,
      );
    } else if (!(await verifyPassword(input.password, user.passwordHash))) {
      return fail('UNAUTHORIZED', `${email} already has a Vigil password: enter it to accept.`);
    }
    if (!(await store.members.useToken(invitation.tokenHash, clock.now())))
      return fail('NOT_FOUND', 'This invitation link is not valid: it was used, withdrawn or has expired.');
    if (await store.members.getMember(accountId, user.id)) return fail('CONFLICT', `${email} is already a member of this account.`);
    const member = await this.members.join(personOrigin(accountId, user, from.ip, from.userAgent), user, role, {
      action: 'invitation.accepted',
      details: { invitation_id: invitation.id, invited_by: invitation.createdBy, new_person: newPerson },
    });
    return { ok: true, value: { user, member } };
  }
}
