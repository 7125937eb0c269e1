import * as oidc from 'openid-client';
import type { AuditTrail, AuditOrigin } from '../audit/trail.js';
import type { Role } from '../event/account.js';
import type { Store } from '../storage/store.js';
import type { MemberRecord, SsoSettings, UserRecord } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { MINUTE_MS } from '../util/duration.js';
import { newId } from '../util/ids.js';
import { hashToken, issueToken, liveToken } from './tokens.js';
import { domainAllowed, issuerProblem, roleFromClaims, type InstanceSso } from './sso-settings.js';
import { guardedProviderFetch } from './provider-fetch.js';
import type { SsrfGuard } from '../webhooks/ssrf.js';

/** A sign-in started at the provider must come back within 10 minutes; its state works once. */
export const OIDC_STATE_TTL_MS = 10 * MINUTE_MS;
/** Provider metadata is fetched again after this long (keys rotate, endpoints move). */
const DISCOVERY_TTL_MS = 10 * MINUTE_MS;
/** Seconds one request to the provider may take. */
const PROVIDER_TIMEOUT_S = 10;
/** Provider configurations kept at once; every account may name its own provider, so the cache is bounded. */
const DISCOVERED_MAX = 1_000;

/** Why a single sign-on failed: the dashboard shows a message for each, the audit trail records it. */
export type SsoFailure = 'sso_not_configured' | 'sso_unavailable' | 'sso_state' | 'sso_provider' | 'sso_email_unverified' | 'sso_domain' | 'sso_role';

export type SsoResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: SsoFailure; readonly accountId: string; readonly email?: string; readonly detail?: string };

/** The settings in force for an account's sign-in, or the instance's (`accountId` undefined). */
interface Resolved {
  readonly settings: SsoSettings;
  readonly source: 'account' | 'instance';
  readonly accountIds: readonly string[];
}

/** What the state of a sign-in in progress keeps server-side (in a member token of purpose 'oidc'). */
interface Pending {
  readonly nonce: string;
  readonly verifier: string;
  readonly binding: string;
  readonly source: 'account' | 'instance';
  readonly redirectUri: string;
}

export interface OidcDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly audit: AuditTrail;
  readonly instance?: InstanceSso;
  readonly allowHttpLoopback: boolean;
  /**
   * Which addresses a provider named in an account's own settings may be reached on: the account
   * chooses that URL, so its connections are checked like webhooks'. The instance's provider is
   * the operator's choice and is not checked.
   */
  readonly accountProviderGuard: SsrfGuard;
}

const failure = (reason: SsoFailure, accountId: string, extra: { email?: string; detail?: string } = {}) => ({
  ok: false as const,
  reason,
  accountId,
  ...extra,
});

const stringClaim = (claims: Readonly<Record<string, unknown>>, name: string): string | undefined => {
  const value = claims[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Single sign-on with the authorization code flow and PKCE. `start` keeps the state, nonce, PKCE
 * verifier and a browser binding server-side; `finish` checks them, lets openid-client exchange
 * the code and check the ID token, then applies the account's rules (verified email, domain, role).
 */
export class OidcSignIn {
  private readonly discovered = new Map<string, { readonly config: Promise<oidc.Configuration>; readonly at: number }>();

  constructor(private readonly deps: OidcDeps) {}

  /** Whether an account (or, without one, the instance) offers single sign-on. */
  async offered(accountId: string | undefined): Promise<boolean> {
    return (await this.resolve(accountId)) !== undefined;
  }

  private async resolve(accountId: string | undefined): Promise<Resolved | undefined> {
    if (accountId !== undefined) {
      const config = await this.deps.store.members.getSsoConfig(accountId);
      if (config) return { settings: config, source: 'account', accountIds: [accountId] };
      if (this.deps.instance?.accountIds.includes(accountId))
        return { settings: this.deps.instance, source: 'instance', accountIds: this.deps.instance.accountIds };
      return undefined;
    }
    return this.deps.instance && { settings: this.deps.instance, source: 'instance', accountIds: this.deps.instance.accountIds };
  }

  /** The provider's configuration for these settings, discovered once per 10 minutes; a failed discovery is not kept. */
  private async configuration(settings: SsoSettings, source: Resolved['source']): Promise<oidc.Configuration> {
    const key = `${source}\n${settings.issuer}\n${settings.clientId}\n${hashToken(settings.clientSecret)}`;
    const now = this.deps.clock.now();
    const known = this.discovered.get(key);
    if (known && now - known.at < DISCOVERY_TTL_MS) return known.config;
    const insecure = new URL(settings.issuer).protocol === 'http:';
    const config = oidc.discovery(new URL(settings.issuer), settings.clientId, undefined, oidc.ClientSecretBasic(settings.clientSecret), {
      timeout: PROVIDER_TIMEOUT_S,
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      ...(source === 'account' ? { [oidc.customFetch]: guardedProviderFetch(this.deps.accountProviderGuard) } : {}),
    });
    this.discovered.delete(key);
    if (this.discovered.size >= DISCOVERED_MAX) {
      const oldest = this.discovered.keys().next();
      if (!oldest.done) this.discovered.delete(oldest.value);
    }
    this.discovered.set(key, { config, at: now });
    config.catch(() => this.discovered.delete(key));
    return config;
  }

  /**
   * Starts a sign-in: the provider's authorization URL, and the binding the browser keeps in a
   * cookie so that only the browser that started it can finish it.
   */
  async start(accountId: string | undefined, redirectUri: string): Promise<SsoResult<{ readonly redirect: string; readonly binding: string }>> {
    const resolved = await this.resolve(accountId);
    if (!resolved || issuerProblem(resolved.settings.issuer, this.deps.allowHttpLoopback))
      return failure('sso_not_configured', accountId ?? this.deps.instance?.accountIds[0] ?? '');
    const home = resolved.accountIds[0] ?? '';
    let config: oidc.Configuration;
    try {
      config = await this.configuration(resolved.settings, resolved.source);
    } catch (err) {
      return failure('sso_unavailable', home, { detail: describe(err) });
    }
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    const binding = oidc.randomState();
    const now = this.deps.clock.now();
    const pending: Pending = { nonce, verifier, binding: hashToken(binding), source: resolved.source, redirectUri };
    // The single-use token is the state the provider hands back.
    const state = await issueToken(this.deps.store, {
      id: newId('tok', now),
      purpose: 'oidc',
      accountId: home,
      userId: null,
      email: null,
      role: null,
      data: { ...pending },
      createdBy: null,
      createdAt: now,
      expiresAt: now + OIDC_STATE_TTL_MS,
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { ok: true, value: { redirect: url.href, binding } };
  }

  /**
   * Finishes a sign-in from the provider's redirect: the query it came with and the browser's
   * binding cookie. On success the person exists and is a member of the account(s) with the mapped role.
   */
  async finish(
    query: URLSearchParams,
    binding: string | undefined,
    origin: Omit<AuditOrigin, 'accountId' | 'actor'>,
  ): Promise<SsoResult<{ readonly user: UserRecord; readonly member: MemberRecord }>> {
    const state = query.get('state') ?? '';
    const now = this.deps.clock.now();
    const token = state === '' ? undefined : await liveToken(this.deps.store, state, 'oidc', now);
    const pending = token?.data as Pending | undefined;
    if (!token || !pending || binding === undefined || hashToken(binding) !== pending.binding)
      return failure('sso_state', token?.accountId ?? '', { detail: token ? 'not the browser that started the sign-in' : 'unknown, used or expired state' });
    const home = token.accountId ?? '';
    if (!(await this.deps.store.members.useToken(token.tokenHash, now))) return failure('sso_state', home, { detail: 'state used already' });
    const resolved = await this.resolve(pending.source === 'account' ? home : undefined);
    if (!resolved || resolved.source !== pending.source) return failure('sso_not_configured', home);
    const { settings } = resolved;
    let config: oidc.Configuration;
    try {
      config = await this.configuration(settings, resolved.source);
    } catch (err) {
      return failure('sso_unavailable', home, { detail: describe(err) });
    }
    let claims: Record<string, unknown>;
    try {
      const current = new URL(pending.redirectUri);
      current.search = query.toString();
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) return failure('sso_provider', home, { detail: 'no ID token' });
      claims = { ...idClaims };
      const missing = claims.email === undefined || (settings.roleClaim !== null && claims[settings.roleClaim] === undefined);
      // Many providers put profile claims only in the userinfo answer of the code flow; the ID token's own claims win.
      if (missing && config.serverMetadata().userinfo_endpoint !== undefined)
        claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...idClaims };
    } catch (err) {
      return failure('sso_provider', home, { detail: describe(err) });
    }
    const email = stringClaim(claims, 'email')?.trim().toLowerCase();
    if (email === undefined || email.length > 254 || !email.includes('@')) return failure('sso_email_unverified', home, { detail: 'no email claim' });
    if (claims.email_verified !== true) return failure('sso_email_unverified', home, { email });
    if (!domainAllowed(settings, email)) return failure('sso_domain', home, { email });
    const role = roleFromClaims(settings, claims);
    if (role === undefined) return failure('sso_role', home, { email });
    const name = stringClaim(claims, 'name')?.slice(0, 200) ?? email.split('@')[0] ?? email;
    const joined = await this.join(resolved.accountIds, email, name, role, origin);
    if (!joined) return failure('sso_not_configured', home, { email, detail: 'the account does not exist' });
    return { ok: true, value: joined };
  }

  /**
   * The person with this email (created without a password on their first sign-in), made a member
   * of each account with the role, or given it; an owner stays an owner. Each change is one audit entry.
   */
  private async join(
    accountIds: readonly string[],
    email: string,
    name: string,
    role: Role,
    origin: Omit<AuditOrigin, 'accountId' | 'actor'>,
  ): Promise<{ user: UserRecord; member: MemberRecord } | undefined> {
    const { store, clock, audit } = this.deps;
    const existing = await Promise.all(accountIds.map((id) => store.accounts.getAccount(id)));
    if (existing.some((a) => a === undefined)) return undefined;
    const now = clock.now();
    const found = await store.members.findUserByEmail(email);
    const user =
      found ??
      (await store.members.createUser({
        id: newId('usr', now),
        email,
        name,
        passwordHash: null,
        totpSecret: null,
        totpEnabledAt: null,
        totpLastStep: null,
        recoveryHashes: [],
        createdAt: now,
        passwordChangedAt: null,
        lastSignInAt: null,
      }));
    const actor = { kind: 'member' as const, id: user.id, label: email };
    let first: MemberRecord | undefined;
    for (const accountId of accountIds) {
      const at = { ...origin, accountId, actor };
      const before = await store.members.getMember(accountId, user.id);
      let member: MemberRecord;
      if (!before) {
        member = { accountId, userId: user.id, role, createdAt: now, createdBy: 'sso' };
        await store.members.addMember(member);
        await audit.record(at, {
          action: 'member.added',
          target: { kind: 'member', id: user.id },
          changes: { role: { before: null, after: role } },
          details: { email, new_person: found === undefined, via: 'sso' },
        });
      } else if (before.role !== role && before.role !== 'owner') {
        member = (await store.members.setMemberRole(accountId, user.id, role)) ?? { ...before, role };
        await audit.record(at, {
          action: 'member.role_changed',
          target: { kind: 'member', id: user.id },
          changes: { role: { before: before.role, after: role } },
          details: { email, via: 'sso' },
        });
      } else member = before;
      first ??= member;
    }
    return first && { user, member: first };
  }
}

/** What went wrong at the provider, for the log (never a token or a secret: openid-client's messages name checks, not values). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown error';
  // openid-client wraps what went wrong on the way (a refused address, an oversized answer) as the cause.
  const cause = err.cause instanceof Error ? `; ${err.cause.message}` : '';
  return `${err.name}: ${err.message}${cause}`.slice(0, 300);
}
