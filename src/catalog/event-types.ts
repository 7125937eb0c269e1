import type { DetectorFamily } from '../event/classification.js';

export type EventTypeKind = 'standard' | 'agent' | 'agent_additional';

export interface EventTypeSpec {
  readonly type: string;
  readonly kind: EventTypeKind;
  readonly families: readonly DetectorFamily[];
}

type Row = readonly [type: string, families: readonly DetectorFamily[]];

/**
 * Families say which detectors may fire on a type:
 * authentication = login attempts and outcomes; credential = passwords, second factors, tokens;
 * session = session lifecycle; account = account lifecycle and profile; privilege = roles and
 * impersonation; data = data access and movement; admin = administrative changes; api = API traffic;
 * host = host agent events; perimeter = network exposure of a host.
 */
const STANDARD: readonly Row[] = [
  // auth (20)
  ['auth.login.success', ['authentication', 'session']],
  ['auth.login.failure', ['authentication', 'credential']],
  ['auth.logout', ['session']],
  ['auth.mfa.enabled', ['credential']],
  ['auth.mfa.disabled', ['credential', 'account']],
  ['auth.mfa.challenge_passed', ['authentication', 'credential']],
  ['auth.mfa.challenge_failed', ['authentication', 'credential']],
  ['auth.mfa.bypass_attempted', ['authentication', 'credential']],
  ['auth.password.changed', ['credential', 'account']],
  ['auth.password.reset_requested', ['credential', 'account']],
  ['auth.password.reset_completed', ['credential', 'account']],
  ['auth.session.created', ['session']],
  ['auth.session.revoked', ['session']],
  ['auth.session.expired', ['session']],
  ['auth.token.created', ['credential', 'session']],
  ['auth.token.revoked', ['credential', 'session']],
  ['auth.token.refreshed', ['session']],
  ['auth.oauth.connected', ['credential', 'account']],
  ['auth.oauth.disconnected', ['credential', 'account']],
  ['auth.sso.login', ['authentication', 'session']],
  // account (13)
  ['account.created', ['account']],
  ['account.updated', ['account']],
  ['account.deleted', ['account']],
  ['account.email.changed', ['account', 'credential']],
  ['account.email.verified', ['account']],
  ['account.phone.changed', ['account', 'credential']],
  ['account.role.changed', ['account', 'privilege']],
  ['account.suspended', ['account']],
  ['account.reactivated', ['account']],
  ['account.locked', ['account', 'authentication']],
  ['account.unlocked', ['account']],
  ['account.invited', ['account']],
  ['account.recovery.used', ['account', 'credential']],
  // data (10)
  ['data.accessed', ['data']],
  ['data.created', ['data']],
  ['data.modified', ['data']],
  ['data.deleted', ['data']],
  ['data.exported', ['data']],
  ['data.downloaded', ['data']],
  ['data.bulk_import', ['data']],
  ['data.bulk_deleted', ['data']],
  ['data.shared', ['data']],
  ['data.permission.changed', ['data', 'privilege']],
  // admin (13)
  ['admin.user.created', ['admin', 'account']],
  ['admin.user.deleted', ['admin', 'account']],
  ['admin.user.impersonated', ['admin', 'privilege']],
  ['admin.role.created', ['admin', 'privilege']],
  ['admin.role.deleted', ['admin', 'privilege']],
  ['admin.config.changed', ['admin']],
  ['admin.settings.updated', ['admin']],
  ['admin.billing.updated', ['admin']],
  ['admin.api_key.created', ['admin', 'credential']],
  ['admin.api_key.revoked', ['admin', 'credential']],
  ['admin.audit_log.viewed', ['admin']],
  ['admin.audit_log.exported', ['admin', 'data']],
  ['admin.integration.added', ['admin']],
  // api (11)
  ['api.request', ['api']],
  ['api.request.failed', ['api']],
  ['api.unauthorized', ['api']],
  ['api.forbidden', ['api']],
  ['api.rate_limited', ['api']],
  ['api.key.used', ['api']],
  ['api.validation.failed', ['api']],
  ['api.webhook.received', ['api']],
  ['api.webhook.failed', ['api']],
  ['api.token.invalid', ['api', 'credential']],
  ['api.cors.rejected', ['api']],
];

const AGENT: readonly Row[] = [
  ['server.ssh.login.success', ['host', 'authentication']],
  ['server.ssh.login.failure', ['host', 'authentication']],
  ['server.ssh.session.closed', ['host', 'session']],
  ['server.user.created', ['host', 'account']],
  ['server.user.deleted', ['host', 'account']],
  ['server.user.sudo', ['host', 'privilege']],
  ['server.user.su', ['host', 'privilege']],
  ['server.file.created', ['host']],
  ['server.file.modified', ['host']],
  ['server.file.deleted', ['host']],
  ['server.file.permission_changed', ['host']],
  ['server.process.executed', ['host']],
  ['server.process.suspicious', ['host']],
  ['server.network.port_scan_detected', ['host', 'perimeter']],
  ['server.network.listener.opened', ['host', 'perimeter']],
  ['server.firewall.rule_added', ['host', 'perimeter']],
  ['server.firewall.rule_removed', ['host', 'perimeter']],
  ['server.cron.added', ['host']],
  ['server.cron.modified', ['host']],
  ['server.cron.removed', ['host']],
  ['server.container.started', ['host']],
  ['server.container.stopped', ['host']],
  ['server.container.escape_attempt', ['host']],
  ['server.log.cleared', ['host']],
  ['server.log.tampered', ['host']],
  ['server.package.installed', ['host']],
  ['server.kernel.module_loaded', ['host']],
  ['server.agent.heartbeat', ['host']],
];

/**
 * shadow-utils changes the host agent reads from the auth log beyond the agent types above:
 * a user's groups or attributes changed (usermod, or useradd adding a user to a group), a group
 * added or removed. Listed apart so the counts of the agent types stay those of the type list.
 */
const AGENT_ADDITIONAL: readonly Row[] = [
  ['server.user.modified', ['host', 'account', 'privilege']],
  ['server.group.created', ['host', 'account']],
  ['server.group.deleted', ['host', 'account']],
];

const spec =
  (kind: EventTypeKind) =>
  ([type, families]: Row): EventTypeSpec => ({ type, kind, families });

export const STANDARD_TYPES: readonly EventTypeSpec[] = STANDARD.map(spec('standard'));
export const AGENT_TYPES: readonly EventTypeSpec[] = AGENT.map(spec('agent'));
export const AGENT_ADDITIONAL_TYPES: readonly EventTypeSpec[] = AGENT_ADDITIONAL.map(spec('agent_additional'));

/** Base score of each predefined type; every other type scores 0. */
export const BASE_SCORES: Readonly<Record<string, number>> = Object.freeze({
  ...scoreRow(60, 'server.container.escape_attempt'),
  ...scoreRow(50, 'server.log.tampered'),
  ...scoreRow(45, 'server.log.cleared'),
  ...scoreRow(40, 'auth.mfa.bypass_attempted'),
  ...scoreRow(35, 'server.process.suspicious', 'server.network.port_scan_detected'),
  ...scoreRow(30, 'auth.mfa.disabled'),
  ...scoreRow(25, 'admin.user.impersonated'),
  ...scoreRow(20, 'account.role.changed'),
  ...scoreRow(15, 'account.deleted', 'account.email.changed', 'data.exported', 'server.file.modified', 'server.firewall.rule_removed', 'server.user.su'),
  ...scoreRow(12, 'account.phone.changed', 'api.unauthorized', 'server.file.deleted', 'server.file.permission_changed', 'server.cron.added'),
  ...scoreRow(
    10,
    'auth.login.failure',
    'auth.password.changed',
    'auth.oauth.connected',
    'account.suspended',
    'data.bulk_import',
    'data.downloaded',
    'admin.config.changed',
    'server.user.created',
    'server.user.deleted',
    'server.user.sudo',
    'server.cron.modified',
  ),
  ...scoreRow(
    8,
    'auth.password.reset_requested',
    'auth.oauth.disconnected',
    'data.modified',
    'admin.settings.updated',
    'admin.api_key.revoked',
    'server.ssh.login.failure',
    'server.firewall.rule_added',
  ),
  ...scoreRow(5, 'auth.session.revoked', 'auth.token.revoked', 'data.accessed', 'admin.billing.updated', 'admin.api_key.created', 'api.rate_limited'),
  ...scoreRow(3, 'api.request.failed', 'server.process.executed', 'server.container.started'),
});

function scoreRow(score: number, ...types: string[]): Record<string, number> {
  return Object.fromEntries(types.map((t) => [t, score]));
}
