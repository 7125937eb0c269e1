import type { Kysely } from 'kysely';
import { keyText } from './dialect.js';

/**
 * People: users (one per email, instance-wide), their memberships of accounts with a role,
 * single-use tokens (invitations, password resets, second-factor challenges, single sign-on
 * states; stored as hashes), their sessions, per-account single sign-on settings and the audit
 * trail. API keys gain scopes and a name, alerts an assignee, notes their author.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyText(db);
  await db.schema
    .createTable('users')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('email', key, (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('totp_secret', 'text')
    .addColumn('totp_enabled_at', 'bigint')
    .addColumn('totp_last_step', 'bigint')
    .addColumn('recovery_hashes', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('password_changed_at', 'bigint')
    .addColumn('last_sign_in_at', 'bigint')
    .execute();

  await db.schema
    .createTable('members')
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('user_id', key, (c) => c.notNull())
    .addColumn('role', key, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addPrimaryKeyConstraint('members_pk', ['account_id', 'user_id'])
    .execute();
  await db.schema.createIndex('members_user').on('members').columns(['user_id']).execute();

  await db.schema
    .createTable('member_tokens')
    .addColumn('token_hash', key, (c) => c.primaryKey())
    .addColumn('id', key, (c) => c.notNull().unique())
    .addColumn('purpose', key, (c) => c.notNull())
    .addColumn('account_id', key)
    .addColumn('user_id', key)
    .addColumn('email', key)
    .addColumn('role', key)
    .addColumn('data', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('member_tokens_account').on('member_tokens').columns(['account_id', 'purpose', 'id']).execute();
  await db.schema.createIndex('member_tokens_expires').on('member_tokens').columns(['expires_at']).execute();

  await db.schema
    .createTable('member_sessions')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('id_hash', key, (c) => c.notNull().unique())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('user_id', key, (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('method', key, (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('member_sessions_user').on('member_sessions').columns(['user_id', 'account_id']).execute();
  await db.schema.createIndex('member_sessions_expires').on('member_sessions').columns(['expires_at']).execute();

  await db.schema
    .createTable('sso_configs')
    .addColumn('account_id', key, (c) => c.primaryKey())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('allowed_domains', 'text', (c) => c.notNull())
    .addColumn('role_claim', 'text')
    .addColumn('role_map', 'text', (c) => c.notNull())
    .addColumn('default_role', key)
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('account_id', key, (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor_kind', key, (c) => c.notNull())
    .addColumn('actor_id', key)
    .addColumn('actor_label', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('action', key, (c) => c.notNull())
    .addColumn('target_kind', key)
    .addColumn('target_id', key)
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_account').on('audit_log').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('audit_log_account_at').on('audit_log').columns(['account_id', 'at']).execute();

  await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
  await db.schema.alterTable('alerts').addColumn('assignee', key).execute();
  await db.schema.alterTable('alert_notes').addColumn('author_kind', key).execute();
  await db.schema.alterTable('alert_notes').addColumn('author_id', key).execute();
  await db.schema.alterTable('alert_notes').addColumn('author_label', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('alert_notes').dropColumn('author_label').execute();
  await db.schema.alterTable('alert_notes').dropColumn('author_id').execute();
  await db.schema.alterTable('alert_notes').dropColumn('author_kind').execute();
  await db.schema.alterTable('alerts').dropColumn('assignee').execute();
  await db.schema.alterTable('api_keys').dropColumn('name').execute();
  await db.schema.alterTable('api_keys').dropColumn('scopes').execute();
  for (const table of ['audit_log', 'sso_configs', 'member_sessions', 'member_tokens', 'members', 'users'])
    await db.schema.dropTable(table).ifExists().execute();
}
