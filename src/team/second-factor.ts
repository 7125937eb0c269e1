import type { AuditOrigin } from '../audit/trail.js';
import type { UserRecord } from '../storage/types.js';
import { fail, type MembersResult, type TeamDeps } from './members.js';
import { verifyPassword } from './passwords.js';
import { hashRecoveryCode, matchingStep, newRecoveryCodes, newTotpSecret, otpauthUri } from './totp.js';

/** What proves the second factor: a code from the authenticator app, or one of the recovery codes. */
export type SecondFactorProof = { readonly code?: string; readonly recoveryCode?: string };

/** TOTP enrolment and checks, and the recovery codes that stand in for a lost authenticator. */
export class SecondFactor {
  constructor(private readonly deps: Pick<TeamDeps, 'store' | 'audit' | 'clock'>) {}

  /** True when `code` is the person's current code and it was not used before (a code works once, on every instance). */
  async checkCode(user: UserRecord, code: string): Promise<boolean> {
    if (user.totpSecret === null) return false;
    const step = matchingStep(user.totpSecret, code, this.deps.clock.now());
    return step !== undefined && (await this.deps.store.members.acceptTotpStep(user.id, step));
  }

  /** Checks a code or spends a recovery code; which one was used, or undefined when neither holds. */
  async check(user: UserRecord, proof: SecondFactorProof): Promise<'totp' | 'recovery' | undefined> {
    if (user.totpEnabledAt === null) return undefined;
    if (proof.code !== undefined) return (await this.checkCode(user, proof.code)) ? 'totp' : undefined;
    if (proof.recoveryCode !== undefined)
      return (await this.deps.store.members.useRecoveryCode(user.id, hashRecoveryCode(proof.recoveryCode))) ? 'recovery' : undefined;
    return undefined;
  }

  /** Starts enrolment: a new secret, pending until a code from it is confirmed. */
  async begin(user: UserRecord, issuer: string): Promise<MembersResult<{ secret: string; uri: string }>> {
    if (user.totpEnabledAt !== null) return fail('CONFLICT', 'Two-step sign-in is on already: turn it off first to enrol another authenticator.');
    const secret = newTotpSecret();
    await this.deps.store.members.updateUser(user.id, { totpSecret: secret });
    return { ok: true, value: { secret, uri: otpauthUri(issuer, user.email, secret) } };
  }

  /** Turns two-step sign-in on with a code of the pending secret; answers the recovery codes (shown this once). */
  async confirm(origin: AuditOrigin, user: UserRecord, code: string): Promise<MembersResult<{ recoveryCodes: string[] }>> {
    if (user.totpEnabledAt !== null) return fail('CONFLICT', 'Two-step sign-in is on already.');
    if (user.totpSecret === null) return fail('CONFLICT', 'Start enrolment first (POST /v1/me/totp).');
    if (!(await this.checkCode(user, code))) return fail('INVALID_REQUEST', 'Wrong code: enter the current code of the authenticator app.');
    const recoveryCodes = newRecoveryCodes();
    await this.deps.store.members.updateUser(user.id, { totpEnabledAt: this.deps.clock.now(), recoveryHashes: recoveryCodes.map(hashRecoveryCode) });
    await this.deps.audit.record(origin, {
      action: 'totp.enabled',
      target: { kind: 'member', id: user.id },
      changes: { totp: { before: false, after: true } },
    });
    return { ok: true, value: { recoveryCodes } };
  }

  /** Turns two-step sign-in off, proven by a current code or the password. */
  async disable(origin: AuditOrigin, user: UserRecord, proof: { readonly code?: string; readonly password?: string }): Promise<MembersResult<undefined>> {
    if (user.totpEnabledAt === null) return fail('CONFLICT', 'Two-step sign-in is off already.');
    const proven =
      proof.code !== undefined
        ? await this.checkCode(user, proof.code)
        : proof.password !== undefined && (await verifyPassword(proof.password, user.passwordHash));
    if (!proven) return fail('UNAUTHORIZED', 'Wrong code or password.');
    await this.deps.store.members.updateUser(user.id, { totpSecret: null, totpEnabledAt: null, recoveryHashes: [] });
    await this.deps.audit.record(origin, {
      action: 'totp.disabled',
      target: { kind: 'member', id: user.id },
      changes: { totp: { before: true, after: false } },
    });
    return { ok: true, value: undefined };
  }

  /** A new set of recovery codes replaces the old one, proven by a current code. */
  async regenerate(origin: AuditOrigin, user: UserRecord, code: string): Promise<MembersResult<{ recoveryCodes: string[] }>> {
    if (user.totpEnabledAt === null) return fail('CONFLICT', 'Two-step sign-in is off: recovery codes come with it.');
    if (!(await this.checkCode(user, code))) return fail('UNAUTHORIZED', 'Wrong code: enter the current code of the authenticator app.');
    const recoveryCodes = newRecoveryCodes();
    await this.deps.store.members.updateUser(user.id, { recoveryHashes: recoveryCodes.map(hashRecoveryCode) });
    await this.deps.audit.record(origin, {
      action: 'recovery_codes.regenerated',
      target: { kind: 'member', id: user.id },
      details: { count: recoveryCodes.length },
    });
    return { ok: true, value: { recoveryCodes } };
  }
}
