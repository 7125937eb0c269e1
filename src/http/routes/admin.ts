import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MAX_ORIGINS, type Accounts } from '../../accounts/accounts.js';
import type { ApiKeyRecord } from '../../storage/types.js';
import type { Account } from '../../event/account.js';
import type { Store } from '../../storage/store.js';
import { adminOrigin } from '../audit-origin.js';
import { ApiError } from '../errors.js';
import { NoFilters } from '../list-filter.js';
import { ErrorResponses } from '../schemas.js';
import { KeyName, keyView as publicKeyView, ScopeList, unwrapAccounts as unwrap } from './keys.js';

/** Changes go through Accounts, which records them (the operator as actor) and makes them apply at once on every instance. */
export interface AdminRouteDeps {
  readonly accounts: Accounts;
  readonly store: Store;
}

const Name = Type.String({ minLength: 1, maxLength: 200 });
const PlanName = Type.String({ minLength: 1, maxLength: 32 });
const Origin = Type.String({ minLength: 1, maxLength: 255, pattern: '^(\\*|https?://[^/\\s]+)$' });

const accountView = (a: Account) => ({ id: a.id, name: a.name, plan: a.plan, created_at: new Date(a.createdAt).toISOString() });
const keyView = (k: ApiKeyRecord) => ({ ...publicKeyView(k), account_id: k.accountId });

const adminSchema = (summary: string) => ({ summary, tags: ['admin'], security: [{ bearer: [] as string[] }], response: { ...ErrorResponses } });

/** Admin API, behind VIGIL_ADMIN_TOKEN. */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminRouteDeps): void {
  const config = { access: 'admin' as const };
  const CreateAccount = Type.Object({ name: Name, plan: PlanName }, { additionalProperties: false });
  app.post<{ Body: Static<typeof CreateAccount> }>('/admin/accounts', {
    config,
    schema: { ...adminSchema('Create an account'), body: CreateAccount },
    handler: async (request, reply) => {
      const account = unwrap(await deps.accounts.create(request.body.name, request.body.plan, adminOrigin(request)));
      reply.code(201);
      return accountView(account);
    },
  });

  app.get('/admin/accounts', {
    config,
    schema: { ...adminSchema('List accounts'), querystring: NoFilters },
    handler: async () => ({ data: (await deps.store.accounts.listAccounts()).map(accountView) }),
  });

  const Id = Type.Object({ id: Type.String({ maxLength: 64 }) });
  const PatchAccount = Type.Object({ plan: PlanName }, { additionalProperties: false });
  app.patch<{ Params: Static<typeof Id>; Body: Static<typeof PatchAccount> }>('/admin/accounts/:id', {
    config,
    schema: { ...adminSchema('Change an account plan (applies at once)'), params: Id, body: PatchAccount },
    handler: async (request) => {
      const account = unwrap(await deps.accounts.changePlan(request.params.id, request.body.plan, adminOrigin(request)));
      return accountView(account);
    },
  });

  const CreateKey = Type.Object(
    {
      kind: Type.Union([Type.Literal('secret'), Type.Literal('publishable')]),
      allowed_origins: Type.Optional(Type.Array(Origin, { maxItems: MAX_ORIGINS })),
      scopes: Type.Optional(ScopeList),
      name: Type.Optional(KeyName),
    },
    { additionalProperties: false },
  );
  app.post<{ Params: Static<typeof Id>; Body: Static<typeof CreateKey> }>('/admin/accounts/:id/keys', {
    config,
    schema: { ...adminSchema('Create a key; the response is the only time the key is shown'), params: Id, body: CreateKey },
    handler: async (request, reply) => {
      const { body } = request;
      const options = { ...(body.scopes ? { scopes: body.scopes } : {}), ...(body.name ? { name: body.name } : {}), by: adminOrigin(request) };
      const { record, key } = unwrap(await deps.accounts.createKey(request.params.id, body.kind, body.allowed_origins ?? [], options));
      reply.code(201);
      return { ...keyView(record), key };
    },
  });

  app.get<{ Params: Static<typeof Id> }>('/admin/accounts/:id/keys', {
    config,
    schema: { ...adminSchema('List an account keys (never the keys themselves)'), params: Id, querystring: NoFilters },
    handler: async (request) => ({ data: (await deps.store.accounts.listKeys(request.params.id)).map(keyView) }),
  });

  const PatchKey = Type.Object(
    { allowed_origins: Type.Optional(Type.Array(Origin, { maxItems: MAX_ORIGINS })), scopes: Type.Optional(ScopeList), name: Type.Optional(KeyName) },
    { additionalProperties: false },
  );
  app.patch<{ Params: Static<typeof Id>; Body: Static<typeof PatchKey> }>('/admin/keys/:id', {
    config,
    schema: {
      ...adminSchema('Change a key: the browser origins of a publishable key, its scopes, its name (applies at once)'),
      params: Id,
      body: PatchKey,
    },
    handler: async (request) => {
      const { body } = request;
      if (Object.keys(body).length === 0) throw new ApiError({ code: 'INVALID_REQUEST', message: 'Nothing to change: send allowed_origins, scopes or name.' });
      const patch = {
        ...(body.allowed_origins ? { allowedOrigins: body.allowed_origins } : {}),
        ...(body.scopes ? { scopes: body.scopes } : {}),
        ...(body.name ? { name: body.name } : {}),
      };
      return keyView(unwrap(await deps.accounts.updateKey(request.params.id, patch, { by: adminOrigin(request) })));
    },
  });

  app.delete<{ Params: Static<typeof Id> }>('/admin/keys/:id', {
    config,
    schema: { ...adminSchema('Revoke a key (answers 401 from then on)'), params: Id },
    handler: async (request, reply) => {
      unwrap(await deps.accounts.revokeKey(request.params.id, { by: adminOrigin(request) }));
      reply.code(204);
      return null;
    },
  });
}
