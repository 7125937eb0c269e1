import type { Role } from '../event/account.js';
import type { SsoSettings } from '../storage/types.js';
import { memberOf } from '../util/member-of.js';

/** The instance's single sign-on: the accounts it signs people in to (the session opens in the first). */
export interface InstanceSso extends SsoSettings {
  readonly accountIds: readonly string[];
}

/** Roles single sign-on may grant: owners are made in Vigil, so a provider's groups never make or unmake one. */
export const SSO_ROLES: readonly Role[] = ['viewer', 'analyst', 'admin'];

/** Size bounds of the settings, shared by the API schema and the environment. */
export const SSO_LIMITS = {
  issuer: 512,
  clientId: 256,
  clientSecret: 512,
  domains: 50,
  domain: 253,
  claim: 100,
  mappings: 100,
  claimValue: 256,
} as const;

const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

const isLoopbackHost = (host: string): boolean => host === 'localhost' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);

/**
 * Why this issuer is not acceptable, or undefined. Providers are reached over https only; a
 * provider on the same machine may use http when the operator allows it (VIGIL_SSO_ALLOW_HTTP_LOOPBACK).
 */
export function issuerProblem(issuer: string, allowHttpLoopback: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'the issuer must be an https URL';
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    return 'the issuer must be an https URL without a query, fragment or credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return allowHttpLoopback ? undefined : 'the issuer must be an https URL (http on a loopback address needs VIGIL_SSO_ALLOW_HTTP_LOOPBACK=on)';
  }
  return 'the issuer must be an https URL';
}

/** Why this email domain is not one, or undefined. */
export const domainProblem = (domain: string): string | undefined => (DOMAIN.test(domain) ? undefined : `"${domain}" is not an email domain`);

/** Why this role may not be granted by single sign-on, or undefined. */
export const ssoRoleProblem = (role: string): string | undefined =>
  memberOf(SSO_ROLES, role) ? undefined : `"${role}" is not a role single sign-on grants (${SSO_ROLES.join(', ')})`;

/** Whether the email's domain may sign in with these settings. */
export function domainAllowed(settings: Pick<SsoSettings, 'allowedDomains'>, email: string): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return settings.allowedDomains.length === 0 || settings.allowedDomains.includes(domain);
}

/**
 * The role the claims give: the highest role any value of the role claim maps to, else the
 * default role; undefined when neither gives one (the person is refused).
 */
export function roleFromClaims(
  settings: Pick<SsoSettings, 'roleClaim' | 'roleMap' | 'defaultRole'>,
  claims: Readonly<Record<string, unknown>>,
): Role | undefined {
  const raw = settings.roleClaim === null ? undefined : claims[settings.roleClaim];
  const values = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.filter((v): v is string => typeof v === 'string') : [];
  let best: Role | undefined;
  for (const value of values) {
    const role = Object.hasOwn(settings.roleMap, value) ? settings.roleMap[value] : undefined;
    if (role !== undefined && (best === undefined || SSO_ROLES.indexOf(role) > SSO_ROLES.indexOf(best))) best = role;
  }
  return best ?? settings.defaultRole ?? undefined;
}
