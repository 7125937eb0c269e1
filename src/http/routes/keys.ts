import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MAX_KEY_NAME, type Accounts, type AccountsResult } from '../../accounts/accounts.js';
import { KEY_SCOPES } from '../../event/account.js';
import type { ApiKeyRecord } from '../../storage/types.js';
import { auditOrigin } from '../audit-origin.js';
import { requestAccount } from '../context.js';
import { ApiError } from '../errors.js';
import { NoFilters } from '../list-filter.js';
import { ErrorResponses, KeyAuth } from '../schemas.js';

export interface KeyRouteDeps {
  readonly accounts: Accounts;
}

/** Scopes arrive as plain strings so that an unknown one is answered with the list of scopes (accounts.ts). */
export const ScopeList = Type.Array(Type.String({ minLength: 1, maxLength: 32 }), {
  maxItems: 10,
  description: `What the key may do: ${KEY_SCOPES.join(', ')}. A publishable key holds only ingest.`,
});
export const KeyName = Type.String({ minLength: 1, maxLength: MAX_KEY_NAME });
const KeyKindSchema = Type.Union([Type.Literal('secret'), Type.Literal('publishable')]);

const KeyView = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
  kind: KeyKindSchema,
  name: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Array(Type.String()),
  allowed_origins: Type.Array(Type.String()),
  created_at: Type.String(),
  revoked_at: Type.Union([Type.String(), Type.Null()]),
});

/** A key as every API shows it: never the key itself nor its hash. */
export const keyView = (k: ApiKeyRecord): Static<typeof KeyView> => ({
  id: k.id,
  prefix: k.prefix,
  kind: k.kind,
  name: k.name,
  scopes: [...k.scopes],
  allowed_origins: [...k.allowedOrigins],
  created_at: new Date(k.createdAt).toISOString(),
  revoked_at: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
});

/** The value of an accounts operation, or its refusal as an HTTP error. */
export function unwrapAccounts<T>(result: AccountsResult<T>): T {
  if (!result.ok) throw new ApiError({ code: result.code, message: result.message });
  return result.value;
}

const CreateBody = Type.Object({ kind: Type.Optional(KeyKindSchema), name: KeyName, scopes: ScopeList }, { additionalProperties: false });
const PatchBody = Type.Object({ scopes: Type.Optional(ScopeList), name: Type.Optional(KeyName) }, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/**
 * /v1/keys: the account's API keys, managed by an admin or a key with the manage scope. A
 * change applies from its answer on, on every instance; a key may revoke itself.
 */
export function registerKeyRoutes(app: FastifyInstance, deps: KeyRouteDeps): void {
  const config = { access: 'manage' as const };
  const route = (summary: string) => ({ summary, tags: ['keys'], security: KeyAuth, response: { ...ErrorResponses } });

  app.get('/v1/keys', {
    config,
    schema: { ...route('List the account keys, revoked ones included (never the keys themselves)'), querystring: NoFilters },
    handler: async (request) => ({ keys: (await deps.accounts.listKeys(requestAccount(request).account.id)).map(keyView) }),
  });

  app.post<{ Body: Static<typeof CreateBody> }>('/v1/keys', {
    config,
    schema: {
      ...route('Create a key; the answer is the only time the key is shown'),
      body: CreateBody,
      response: { ...ErrorResponses, 201: Type.Composite([KeyView, Type.Object({ key: Type.String() })]) },
    },
    handler: async (request, reply) => {
      const { body } = request;
      const created = unwrapAccounts(
        await deps.accounts.createKey(requestAccount(request).account.id, body.kind ?? 'secret', [], {
          scopes: body.scopes,
          name: body.name,
          by: auditOrigin(request),
        }),
      );
      reply.code(201);
      return { ...keyView(created.record), key: created.key };
    },
  });

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof PatchBody> }>('/v1/keys/:id', {
    config,
    schema: { ...route("Change a key's scopes or name (applies at once)"), params: IdParams, body: PatchBody, response: { ...ErrorResponses, 200: KeyView } },
    handler: async (request) => {
      if (Object.keys(request.body).length === 0) throw new ApiError({ code: 'INVALID_REQUEST', message: 'Nothing to change: send scopes or name.' });
      const patch = { ...(request.body.scopes ? { scopes: request.body.scopes } : {}), ...(request.body.name ? { name: request.body.name } : {}) };
      const options = { accountId: requestAccount(request).account.id, by: auditOrigin(request) };
      return keyView(unwrapAccounts(await deps.accounts.updateKey(request.params.id, patch, options)));
    },
  });

  app.delete<{ Params: Static<typeof IdParams> }>('/v1/keys/:id', {
    config,
    schema: { ...route('Revoke a key: it is refused from this answer on'), params: IdParams },
    handler: async (request, reply) => {
      unwrapAccounts(await deps.accounts.revokeKey(request.params.id, { accountId: requestAccount(request).account.id, by: auditOrigin(request) }));
      reply.code(204);
    },
  });
}
