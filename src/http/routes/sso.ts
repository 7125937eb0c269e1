import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { oidcRedirectUri } from '../../dashboard/oidc.js';
import { changesBetween, type AuditTrail } from '../../audit/trail.js';
import type { Store } from '../../storage/store.js';
import type { SsoConfig } from '../../storage/types.js';
import { domainProblem, issuerProblem, SSO_LIMITS, SSO_ROLES } from '../../team/sso-settings.js';
import type { Clock } from '../../util/clock.js';
import { auditOrigin } from '../audit-origin.js';
import { requestAccount } from '../context.js';
import { ApiError } from '../errors.js';
import { ErrorResponses } from '../schemas.js';
import { hashToken } from '../../team/tokens.js';

export interface SsoRouteDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly audit: AuditTrail;
  readonly allowHttpLoopback: boolean;
  /** VIGIL_PUBLIC_URL, which the redirect URI to register at the provider starts with. */
  readonly publicUrl?: string;
}

const SsoRole = Type.Union(
  SSO_ROLES.map((role) => Type.Literal(role)),
  { description: 'viewer, analyst or admin: owners are made in Vigil' },
);

const SsoBody = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: SSO_LIMITS.issuer, description: 'The provider’s issuer URL (https)' }),
    client_id: Type.String({ minLength: 1, maxLength: SSO_LIMITS.clientId }),
    client_secret: Type.Optional(
      Type.String({ minLength: 1, maxLength: SSO_LIMITS.clientSecret, writeOnly: true, description: 'Write-only; leave out to keep the stored one' }),
    ),
    allowed_domains: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: SSO_LIMITS.domain }), { maxItems: SSO_LIMITS.domains, description: 'Empty: any verified email' }),
    ),
    role_claim: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: SSO_LIMITS.claim }), Type.Null()], { description: 'e.g. groups' })),
    role_map: Type.Optional(
      Type.Record(Type.String({ maxLength: SSO_LIMITS.claimValue }), SsoRole, {
        maxProperties: SSO_LIMITS.mappings,
        description: 'Claim value -> role; the highest match wins',
      }),
    ),
    default_role: Type.Optional(Type.Union([SsoRole, Type.Null()], { description: 'The role when nothing maps; null refuses the person' })),
  },
  { additionalProperties: false },
);

const SsoView = Type.Object(
  {
    issuer: Type.String(),
    client_id: Type.String(),
    client_secret_set: Type.Boolean(),
    allowed_domains: Type.Array(Type.String()),
    role_claim: Type.Union([Type.String(), Type.Null()]),
    role_map: Type.Record(Type.String(), Type.String()),
    default_role: Type.Union([Type.String(), Type.Null()]),
    redirect_uri: Type.String({ description: 'The redirect URI to register at the provider' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'SsoSettings' },
);

/** What the API shows of an account's settings: everything but the secret. */
const fieldsOf = (c: SsoConfig) => ({
  issuer: c.issuer,
  client_id: c.clientId,
  allowed_domains: c.allowedDomains,
  role_claim: c.roleClaim,
  role_map: c.roleMap,
  default_role: c.defaultRole,
});

/** GET/PUT/DELETE /v1/sso: an account's single sign-on, managed by its admins (people only). */
export function registerSsoRoutes(app: FastifyInstance, deps: SsoRouteDeps): void {
  const { store, audit } = deps;
  const schema = (summary: string, extra: Record<string, unknown> = {}) => ({ summary, tags: ['people'], response: { ...ErrorResponses }, ...extra });
  const view = (request: FastifyRequest, c: SsoConfig) => ({
    ...fieldsOf(c),
    client_secret_set: true,
    redirect_uri: oidcRedirectUri(deps.publicUrl, request),
    updated_at: new Date(c.updatedAt).toISOString(),
  });

  app.get('/v1/sso', {
    config: { access: 'people' },
    schema: schema('The account’s single sign-on settings (without the client secret)', { response: { 200: SsoView, ...ErrorResponses } }),
    handler: async (request) => {
      const config = await store.members.getSsoConfig(requestAccount(request).account.id);
      if (!config) throw new ApiError({ code: 'NOT_FOUND', message: 'Single sign-on is not set up for this account.' });
      return view(request, config);
    },
  });

  app.put<{ Body: Static<typeof SsoBody> }>('/v1/sso', {
    config: { access: 'people' },
    schema: schema('Set up or change the account’s single sign-on (OpenID Connect)', { body: SsoBody, response: { 200: SsoView, ...ErrorResponses } }),
    handler: async (request) => {
      const accountId = requestAccount(request).account.id;
      const body = request.body;
      const before = await store.members.getSsoConfig(accountId);
      const problems: { field: string; message: string }[] = [];
      const issuer = issuerProblem(body.issuer, deps.allowHttpLoopback);
      if (issuer) problems.push({ field: 'issuer', message: issuer });
      const domains = [...new Set((body.allowed_domains ?? []).map((d) => d.trim().toLowerCase()))];
      for (const domain of domains) {
        const problem = domainProblem(domain);
        if (problem) problems.push({ field: 'allowed_domains', message: problem });
      }
      const roleMap = body.role_map ?? {};
      const roleClaim = body.role_claim ?? null;
      if (Object.keys(roleMap).length > 0 && roleClaim === null)
        problems.push({ field: 'role_claim', message: 'role_map needs role_claim (the claim whose values it maps)' });
      const secret = body.client_secret ?? before?.clientSecret;
      if (secret === undefined) problems.push({ field: 'client_secret', message: 'client_secret is required when setting up single sign-on' });
      if (problems.length > 0 || secret === undefined)
        throw new ApiError({ code: 'INVALID_REQUEST', message: problems.map((p) => p.message).join('; '), details: problems });
      const config: SsoConfig = {
        accountId,
        issuer: body.issuer,
        clientId: body.client_id,
        clientSecret: secret,
        allowedDomains: domains,
        roleClaim,
        roleMap,
        defaultRole: body.default_role ?? null,
        updatedAt: deps.clock.now(),
      };
      await store.members.putSsoConfig(config);
      // The secret enters the comparison as a digest, so the entry says it changed and never what it is.
      const secretOf = (c: SsoConfig | undefined) => (c ? { client_secret: hashToken(c.clientSecret) } : {});
      await audit.record(auditOrigin(request), {
        action: 'sso.configured',
        target: { kind: 'sso', id: accountId },
        changes: changesBetween(before && { ...fieldsOf(before), ...secretOf(before) }, { ...fieldsOf(config), ...secretOf(config) }),
      });
      return view(request, config);
    },
  });

  app.delete('/v1/sso', {
    config: { access: 'people' },
    schema: schema('Turn the account’s single sign-on off', { response: { 204: Type.Null(), ...ErrorResponses } }),
    handler: async (request, reply) => {
      const accountId = requestAccount(request).account.id;
      const before = await store.members.getSsoConfig(accountId);
      if (!before || !(await store.members.deleteSsoConfig(accountId)))
        throw new ApiError({ code: 'NOT_FOUND', message: 'Single sign-on is not set up for this account.' });
      await audit.record(auditOrigin(request), {
        action: 'sso.removed',
        target: { kind: 'sso', id: accountId },
        changes: changesBetween(fieldsOf(before), undefined),
      });
      return reply.code(204).send();
    },
  });
}
