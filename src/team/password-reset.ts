import type { AuditOrigin } from '../audit/trail.js';
import type { UserRecord } from '../storage/types.js';
import { HOUR_MS } from '../util/duration.js';
import { newId } from '../util/ids.js';
import { fail, normalEmail, personOrigin, type MembersResult, type TeamDeps } from './members.js';
import { hashPassword, passwordProblem } from './passwords.js';
import { dashboardLink, issueToken, liveToken } from './tokens.js';

/** A reset link works for one hour, once. */
export const RESET_TTL_MS = HOUR_MS;

type From = { readonly ip: string | null; readonly userAgent: string | null };

/** Forgotten passwords: a single-use link, mailed to the person or handed to the operator. */
export class PasswordResets {
  constructor(private readonly deps: TeamDeps) {}

  private async issue(user: UserRecord, createdBy: string | null): Promise<string> {
    const now = this.deps.clock.now();
    const token = await issueToken(this.deps.store, {
      id: newId('tok', now),
      purpose: 'reset',
      accountId: null,
      userId: user.id,
      email: user.email,
      role: null,
      data: {},
      createdBy,
      createdAt: now,
      expiresAt: now + RESET_TTL_MS,
    });
    return dashboardLink(this.deps.publicUrl, 'reset', token);
  }

  /** One entry in each account the person belongs to: each account's owners see what happens to their people. */
  private async recordForPerson(user: UserRecord, origin: (accountId: string) => AuditOrigin, action: string, details: Record<string, unknown>) {
    for (const membership of await this.deps.store.members.membershipsOf(user.id))
      await this.deps.audit.record(origin(membership.accountId), { action, target: { kind: 'member', id: user.id }, details });
  }

  /**
   * Someone asks for a reset of this email. Nothing tells them whether it belongs to anyone: the
   * caller answers the same either way, and the mail is sent after the answer (`sent` resolves
   * then). Without SMTP no link is made: the request is recorded for the operator to act on.
   */
  async request(emailText: string, from: From): Promise<{ readonly sent: Promise<void> }> {
    const email = normalEmail(emailText);
    const user = email === undefined ? undefined : await this.deps.store.members.findUserByEmail(email);
    if (!user) return { sent: Promise.resolve() };
    // Someone who signs in only through single sign-on has no password to reset: a link would give them one.
    const mailer = user.passwordHash === null ? undefined : this.deps.mailer;
    await this.recordForPerson(
      user,
      (accountId) => ({ accountId, actor: { kind: 'anonymous', id: null, label: user.email }, ...from }),
      'password.reset_requested',
      user.passwordHash === null ? { emailed: false, single_sign_on_only: true } : { emailed: mailer !== undefined },
    );
    if (!mailer) return { sent: Promise.resolve() };
    const link = await this.issue(user, 'self');
    return {
      sent: mailer.send({
        to: user.email,
        subject: 'Reset your Vigil password',
        text: [
          `Someone asked to reset the Vigil password of ${user.email}.`,
          '',
          `Choose a new one within an hour: ${link}`,
          '',
          'If it was not you, ignore this mail.',
        ].join('\n'),
      }),
    };
  }

  /** The operator makes a reset link for a person (no SMTP, or mail that did not arrive). */
  async operatorLink(origin: Omit<AuditOrigin, 'accountId'>, emailText: string): Promise<MembersResult<{ link: string; user: UserRecord }>> {
    const email = normalEmail(emailText);
    const user = email === undefined ? undefined : await this.deps.store.members.findUserByEmail(email);
    if (!user) return fail('NOT_FOUND', `No person has the email ${emailText}.`);
    const link = await this.issue(user, origin.actor.label);
    await this.recordForPerson(user, (accountId) => ({ ...origin, accountId }), 'password.reset_requested', { by: 'operator' });
    return { ok: true, value: { link, user } };
  }

  /** Sets a new password with a reset link (single use) and ends every session of the person. */
  async complete(token: string, password: string, from: From): Promise<MembersResult<{ sessionsRevoked: number }>> {
    const { store, clock } = this.deps;
    const reset = await liveToken(store, token, 'reset', clock.now());
    const user = reset?.userId ? await store.members.getUser(reset.userId) : undefined;
    if (!reset || !user) return fail('NOT_FOUND', 'This reset link is not valid: it was used or has expired. Ask for a new one.');
    const problem = passwordProblem(password, user.email);
    if (problem) return fail('INVALID_REQUEST', problem);
    const passwordHash = await hashPassword(password);
    if (!(await store.members.useToken(reset.tokenHash, clock.now())))
      return fail('NOT_FOUND', 'This reset link is not valid: it was used or has expired. Ask for a new one.');
    const now = clock.now();
    await store.members.updateUser(user.id, { passwordHash, passwordChangedAt: now });
    const sessionsRevoked = await store.members.revokeSessionsOf(user.id, now);
    await this.recordForPerson(user, (accountId) => personOrigin(accountId, user, from.ip, from.userAgent), 'password.changed', {
      via: 'reset',
      sessions_revoked: sessionsRevoked,
    });
    return { ok: true, value: { sessionsRevoked } };
  }
}
