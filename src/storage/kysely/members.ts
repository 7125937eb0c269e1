import type { Role } from '../../event/account.js';
import type { MemberStore } from '../store.js';
import type { MemberRecord, MemberSession, MemberToken, MemberTokenPurpose, SsoConfig, UserRecord } from '../types.js';
import { num, numOrNull, parseJson, type KyselyAccess, type Row } from './access.js';

function toUser(row: Row<'users'>): UserRecord {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    passwordHash: row.password_hash,
    totpSecret: row.totp_secret,
    totpEnabledAt: numOrNull(row.totp_enabled_at),
    totpLastStep: numOrNull(row.totp_last_step),
    recoveryHashes: parseJson<string[]>(row.recovery_hashes),
    createdAt: num(row.created_at),
    passwordChangedAt: numOrNull(row.password_changed_at),
    lastSignInAt: numOrNull(row.last_sign_in_at),
  };
}

const toMember = (row: Row<'members'>): MemberRecord => ({
  accountId: row.account_id,
  userId: row.user_id,
  role: row.role as Role,
  createdAt: num(row.created_at),
  createdBy: row.created_by,
});

const toToken = (row: Row<'member_tokens'>): MemberToken => ({
  tokenHash: row.token_hash,
  id: row.id,
  purpose: row.purpose as MemberTokenPurpose,
  accountId: row.account_id,
  userId: row.user_id,
  email: row.email,
  role: row.role as Role | null,
  data: parseJson(row.data),
  createdBy: row.created_by,
  createdAt: num(row.created_at),
  expiresAt: num(row.expires_at),
  usedAt: numOrNull(row.used_at),
});

const toSession = (row: Row<'member_sessions'>): MemberSession => ({
  id: row.id,
  idHash: row.id_hash,
  accountId: row.account_id,
  userId: row.user_id,
  csrfToken: row.csrf_token,
  method: row.method as MemberSession['method'],
  ip: row.ip,
  userAgent: row.user_agent,
  createdAt: num(row.created_at),
  lastSeenAt: num(row.last_seen_at),
  expiresAt: num(row.expires_at),
  revokedAt: numOrNull(row.revoked_at),
});

const toSso = (row: Row<'sso_configs'>): SsoConfig => ({
  accountId: row.account_id,
  issuer: row.issuer,
  clientId: row.client_id,
  clientSecret: row.client_secret,
  allowedDomains: parseJson(row.allowed_domains),
  roleClaim: row.role_claim,
  roleMap: parseJson(row.role_map),
  defaultRole: row.default_role as Role | null,
  updatedAt: num(row.updated_at),
});

const lower = (email: string): string => email.trim().toLowerCase();

/** People, memberships, tokens, sessions and single sign-on settings over Kysely. */
export class KyselyMemberStore implements MemberStore {
  constructor(private readonly x: KyselyAccess) {}

  async createUser(user: UserRecord): Promise<UserRecord> {
    const stored = { ...user, email: lower(user.email) };
    await this.x.guard('createUser', () =>
      this.x.db
        .insertInto('users')
        .values({
          id: stored.id,
          email: stored.email,
          name: stored.name,
          password_hash: stored.passwordHash,
          totp_secret: stored.totpSecret,
          totp_enabled_at: stored.totpEnabledAt,
          totp_last_step: stored.totpLastStep,
          recovery_hashes: JSON.stringify(stored.recoveryHashes),
          created_at: stored.createdAt,
          password_changed_at: stored.passwordChangedAt,
          last_sign_in_at: stored.lastSignInAt,
        })
        .execute(),
    );
    return stored;
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    if (this.x.unmatchable(id)) return undefined;
    const row = await this.x.read('getUser', () => this.x.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst());
    return row && toUser(row);
  }

  async findUserByEmail(email: string): Promise<UserRecord | undefined> {
    if (this.x.unmatchable(email)) return undefined;
    const row = await this.x.read('findUserByEmail', () => this.x.db.selectFrom('users').selectAll().where('email', '=', lower(email)).executeTakeFirst());
    return row && toUser(row);
  }

  async updateUser(
    id: string,
    patch: Partial<Pick<UserRecord, 'name' | 'passwordHash' | 'totpSecret' | 'totpEnabledAt' | 'recoveryHashes' | 'passwordChangedAt' | 'lastSignInAt'>>,
  ): Promise<UserRecord | undefined> {
    if (this.x.unmatchable(id)) return undefined;
    const values: Partial<Row<'users'>> = {};
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.passwordHash !== undefined) values.password_hash = patch.passwordHash;
    if (patch.totpSecret !== undefined) values.totp_secret = patch.totpSecret;
    if (patch.totpEnabledAt !== undefined) values.totp_enabled_at = patch.totpEnabledAt;
    if (patch.recoveryHashes !== undefined) values.recovery_hashes = JSON.stringify(patch.recoveryHashes);
    if (patch.passwordChangedAt !== undefined) values.password_changed_at = patch.passwordChangedAt;
    if (patch.lastSignInAt !== undefined) values.last_sign_in_at = patch.lastSignInAt;
    // Turning TOTP off or on again starts its replay guard over.
    if (patch.totpSecret !== undefined) values.totp_last_step = null;
    if (Object.keys(values).length > 0) await this.x.guard('updateUser', () => this.x.db.updateTable('users').set(values).where('id', '=', id).execute());
    return this.getUser(id);
  }

  async acceptTotpStep(userId: string, step: number): Promise<boolean> {
    const result = await this.x.guard('acceptTotpStep', () =>
      this.x.db
        .updateTable('users')
        .set({ totp_last_step: step })
        .where('id', '=', userId)
        .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async useRecoveryCode(userId: string, hash: string): Promise<boolean> {
    return this.x.guard('useRecoveryCode', () =>
      this.x.db.transaction().execute(async (trx) => {
        // Writing first takes SQLite's write lock (and PostgreSQL's row lock) before the read.
        await trx
          .updateTable('users')
          .set({ totp_last_step: (eb) => eb.ref('totp_last_step') })
          .where('id', '=', userId)
          .execute();
        const row = await trx.selectFrom('users').select('recovery_hashes').where('id', '=', userId).executeTakeFirst();
        if (!row) return false;
        const hashes = parseJson<string[]>(row.recovery_hashes);
        const left = hashes.filter((h) => h !== hash);
        if (left.length === hashes.length) return false;
        await trx
          .updateTable('users')
          .set({ recovery_hashes: JSON.stringify(left) })
          .where('id', '=', userId)
          .execute();
        return true;
      }),
    );
  }

  async addMember(member: MemberRecord): Promise<void> {
    await this.x.guard('addMember', () =>
      this.x.db
        .insertInto('members')
        .values({ account_id: member.accountId, user_id: member.userId, role: member.role, created_at: member.createdAt, created_by: member.createdBy })
        .execute(),
    );
  }

  async getMember(accountId: string, userId: string): Promise<MemberRecord | undefined> {
    if (this.x.unmatchable(accountId, userId)) return undefined;
    const row = await this.x.read('getMember', () =>
      this.x.db.selectFrom('members').selectAll().where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst(),
    );
    return row && toMember(row);
  }

  async listMembers(accountId: string): Promise<readonly { member: MemberRecord; user: UserRecord }[]> {
    if (this.x.unmatchable(accountId)) return [];
    const rows = await this.x.read('listMembers', () =>
      this.x.db
        .selectFrom('members as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .selectAll('u')
        .select(['m.account_id', 'm.user_id', 'm.role', 'm.created_at as member_created_at', 'm.created_by'])
        .where('m.account_id', '=', accountId)
        .orderBy('m.created_at')
        .orderBy('m.user_id')
        .limit(10_000)
        .execute(),
    );
    return rows.map((r) => ({
      member: toMember({ account_id: r.account_id, user_id: r.user_id, role: r.role, created_at: r.member_created_at, created_by: r.created_by }),
      user: toUser(r),
    }));
  }

  async membershipsOf(userId: string): Promise<readonly MemberRecord[]> {
    if (this.x.unmatchable(userId)) return [];
    const rows = await this.x.read('membershipsOf', () =>
      this.x.db.selectFrom('members').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('account_id').execute(),
    );
    return rows.map(toMember);
  }

  async setMemberRole(accountId: string, userId: string, role: Role): Promise<MemberRecord | undefined> {
    if (this.x.unmatchable(accountId, userId)) return undefined;
    await this.x.guard('setMemberRole', () =>
      this.x.db.updateTable('members').set({ role }).where('account_id', '=', accountId).where('user_id', '=', userId).execute(),
    );
    return this.getMember(accountId, userId);
  }

  async removeMember(accountId: string, userId: string, at: number): Promise<boolean> {
    if (this.x.unmatchable(accountId, userId)) return false;
    return this.x.guard('removeMember', () =>
      this.x.db.transaction().execute(async (trx) => {
        const removed = await trx.deleteFrom('members').where('account_id', '=', accountId).where('user_id', '=', userId).executeTakeFirst();
        await trx
          .updateTable('member_sessions')
          .set({ revoked_at: at })
          .where('account_id', '=', accountId)
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .execute();
        return num(removed.numDeletedRows) > 0;
      }),
    );
  }

  async createToken(token: MemberToken): Promise<void> {
    await this.x.guard('createToken', () =>
      this.x.db
        .insertInto('member_tokens')
        .values({
          token_hash: token.tokenHash,
          id: token.id,
          purpose: token.purpose,
          account_id: token.accountId,
          user_id: token.userId,
          email: token.email === null ? null : lower(token.email),
          role: token.role,
          data: JSON.stringify(token.data),
          created_by: token.createdBy,
          created_at: token.createdAt,
          expires_at: token.expiresAt,
          used_at: token.usedAt,
        })
        .execute(),
    );
  }

  async findToken(tokenHash: string, now: number): Promise<MemberToken | undefined> {
    if (this.x.unmatchable(tokenHash)) return undefined;
    const row = await this.x.read('findToken', () =>
      this.x.db
        .selectFrom('member_tokens')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
    );
    return row && toToken(row);
  }

  async useToken(tokenHash: string, at: number): Promise<boolean> {
    if (this.x.unmatchable(tokenHash)) return false;
    const result = await this.x.guard('useToken', () =>
      this.x.db
        .updateTable('member_tokens')
        .set({ used_at: at })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async listInvitations(accountId: string, now: number): Promise<readonly MemberToken[]> {
    if (this.x.unmatchable(accountId)) return [];
    const rows = await this.x.read('listInvitations', () =>
      this.x.db
        .selectFrom('member_tokens')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('purpose', '=', 'invite')
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .orderBy('id', 'desc')
        .limit(1_000)
        .execute(),
    );
    return rows.map(toToken);
  }

  async revokeInvitation(accountId: string, id: string, at: number): Promise<boolean> {
    if (this.x.unmatchable(accountId, id)) return false;
    const result = await this.x.guard('revokeInvitation', () =>
      this.x.db
        .updateTable('member_tokens')
        .set({ used_at: at })
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .where('purpose', '=', 'invite')
        .where('used_at', 'is', null)
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async createSession(session: MemberSession): Promise<void> {
    await this.x.guard('createSession', () =>
      this.x.db
        .insertInto('member_sessions')
        .values({
          id: session.id,
          id_hash: session.idHash,
          account_id: session.accountId,
          user_id: session.userId,
          csrf_token: session.csrfToken,
          method: session.method,
          ip: session.ip,
          user_agent: session.userAgent,
          created_at: session.createdAt,
          last_seen_at: session.lastSeenAt,
          expires_at: session.expiresAt,
          revoked_at: session.revokedAt,
        })
        .execute(),
    );
  }

  async findSession(idHash: string, now: number): Promise<MemberSession | undefined> {
    if (this.x.unmatchable(idHash)) return undefined;
    const row = await this.x.read('findSession', () =>
      this.x.db
        .selectFrom('member_sessions')
        .selectAll()
        .where('id_hash', '=', idHash)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
    );
    return row && toSession(row);
  }

  async touchSession(id: string, at: number): Promise<void> {
    await this.x.guard('touchSession', () => this.x.db.updateTable('member_sessions').set({ last_seen_at: at }).where('id', '=', id).execute());
  }

  async listSessions(userId: string, now: number, accountId?: string): Promise<readonly MemberSession[]> {
    if (this.x.unmatchable(userId, accountId)) return [];
    let q = this.x.db.selectFrom('member_sessions').selectAll().where('user_id', '=', userId).where('revoked_at', 'is', null).where('expires_at', '>', now);
    if (accountId !== undefined) q = q.where('account_id', '=', accountId);
    const rows = await this.x.read('listSessions', () => q.orderBy('created_at', 'desc').limit(1_000).execute());
    return rows.map(toSession);
  }

  async revokeSession(userId: string, id: string, at: number): Promise<boolean> {
    if (this.x.unmatchable(userId, id)) return false;
    const result = await this.x.guard('revokeSession', () =>
      this.x.db
        .updateTable('member_sessions')
        .set({ revoked_at: at })
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst(),
    );
    return num(result.numUpdatedRows) > 0;
  }

  async revokeSessionsOf(userId: string, at: number, accountId?: string): Promise<number> {
    if (this.x.unmatchable(userId, accountId)) return 0;
    let q = this.x.db
      .updateTable('member_sessions')
      .set({ revoked_at: at })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', at);
    if (accountId !== undefined) q = q.where('account_id', '=', accountId);
    const result = await this.x.guard('revokeSessionsOf', () => q.executeTakeFirst());
    return num(result.numUpdatedRows);
  }

  async getSsoConfig(accountId: string): Promise<SsoConfig | undefined> {
    if (this.x.unmatchable(accountId)) return undefined;
    const row = await this.x.read('getSsoConfig', () => this.x.db.selectFrom('sso_configs').selectAll().where('account_id', '=', accountId).executeTakeFirst());
    return row && toSso(row);
  }

  async putSsoConfig(config: SsoConfig): Promise<void> {
    const row = {
      account_id: config.accountId,
      issuer: config.issuer,
      client_id: config.clientId,
      client_secret: config.clientSecret,
      allowed_domains: JSON.stringify(config.allowedDomains),
      role_claim: config.roleClaim,
      role_map: JSON.stringify(config.roleMap),
      default_role: config.defaultRole,
      updated_at: config.updatedAt,
    };
    await this.x.guard('putSsoConfig', () =>
      this.x.db
        .insertInto('sso_configs')
        .values(row)
        .onConflict((oc) =>
          oc.column('account_id').doUpdateSet({
            issuer: row.issuer,
            client_id: row.client_id,
            client_secret: row.client_secret,
            allowed_domains: row.allowed_domains,
            role_claim: row.role_claim,
            role_map: row.role_map,
            default_role: row.default_role,
            updated_at: row.updated_at,
          }),
        )
        .execute(),
    );
  }

  async deleteSsoConfig(accountId: string): Promise<boolean> {
    if (this.x.unmatchable(accountId)) return false;
    const result = await this.x.guard('deleteSsoConfig', () => this.x.db.deleteFrom('sso_configs').where('account_id', '=', accountId).executeTakeFirst());
    return num(result.numDeletedRows) > 0;
  }

  async pruneExpired(before: number): Promise<number> {
    return this.x.guard('pruneExpired', async () => {
      const tokens = await this.x.db.deleteFrom('member_tokens').where('expires_at', '<', before).executeTakeFirst();
      const sessions = await this.x.db
        .deleteFrom('member_sessions')
        .where((eb) => eb.or([eb('expires_at', '<', before), eb('revoked_at', '<', before)]))
        .executeTakeFirst();
      return num(tokens.numDeletedRows) + num(sessions.numDeletedRows);
    });
  }
}
