/**
 * API keys with scopes through /v1/keys and the admin API: what each scope allows, the bounds,
 * changes in force at once on every instance (two instances sharing PostgreSQL and Redis in
 * scale-out mode), and one audit entry per change with its actor, never the key itself.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEYS_PER_ACCOUNT } from '../../src/accounts/accounts.js';
import { ADMIN_TOKEN, bearer, SCALE_OUT, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { expectError, roomyApp } from './support.js';
import { team } from './team-support.js';

type KeyView = { id: string; prefix: string; kind: string; name: string | null; scopes: string[]; created_at: string; revoked_at: string | null };
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

describe('API keys with scopes', () => {
  let a: TestApp;
  /** A second instance on the same store and Redis in scale-out mode; the same app embedded. */
  let b: TestApp;
  const logged: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({ write: (chunk, _enc, done) => (logged.push(String(chunk)), done()) });
    a = await roomyApp({}, { logger: pino({ level: 'debug' }, sink) });
    if (SCALE_OUT) {
      const redis = { VIGIL_REDIS_URL: a.config.redisUrl as string, VIGIL_REDIS_PREFIX: a.config.redisPrefix };
      b = await roomyApp(redis, { store: a.services.store, clock: a.clock });
      for (const t of [a, b]) await until(() => t.services.redisHealth?.degraded === false, 'Redis connected');
    } else b = a;
  });
  // b shares a's store: close b's app only and leave the store to a.
  afterAll(async () => {
    if (b !== a) await b?.vigil.close();
    await a?.close();
  });

  const call = (t: TestApp, key: string, method: Method, url: string, payload?: object) =>
    t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload }) });
  const admin = (method: Method, url: string, payload?: object) =>
    a.vigil.app.inject({ method, url, headers: { ...bearer(ADMIN_TOKEN), 'user-agent': 'ops-script' }, ...(payload === undefined ? {} : { payload }) });
  const create = async (owner: string, body: object): Promise<KeyView & { key: string }> => {
    const res = await call(a, owner, 'POST', '/v1/keys', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const auditOf = async (accountId: string, targetId?: string) =>
    [...(await a.services.store.audit.list(accountId, targetId === undefined ? {} : { targetId }, 100)).items].reverse();

  it('a key does what its scopes allow: read, ingest or manage', async () => {
    const acct = await a.account('pro');
    const reader = await create(acct.secret, { name: 'Reporting job', scopes: ['read'] });
    expect(reader).toMatchObject({ kind: 'secret', name: 'Reporting job', scopes: ['read'], prefix: reader.key.slice(0, 11), revoked_at: null });
    expect(reader.key).toMatch(/^vgl_sk_[0-9A-Za-z]{32}$/);
    const sender = await create(acct.secret, { kind: 'publishable', name: 'Web app', scopes: ['ingest'] });
    const manager = await create(acct.secret, { name: 'Provisioning', scopes: ['manage', 'read', 'manage'] });
    expect(manager.scopes).toEqual(['read', 'manage']);

    expect((await call(a, reader.key, 'GET', '/v1/events')).statusCode).toBe(200);
    expect((await call(a, reader.key, 'GET', '/v1/alerts')).statusCode).toBe(200);
    const send = await call(a, reader.key, 'POST', '/v1/events', { event: 'auth.login.success', actor_id: 'u1' });
    expect(expectError(send, 403, 'FORBIDDEN').message).toBe('This key lacks the "ingest" scope.');
    expectError(await call(a, reader.key, 'PATCH', '/v1/alerts/alr_01ARZ3NDEKTSV4RRFFQ69G5FAV', { status: 'resolved' }), 403, 'FORBIDDEN');
    expectError(await call(a, reader.key, 'GET', '/v1/keys'), 403, 'FORBIDDEN');
    expectError(await call(a, reader.key, 'POST', '/v1/keys', { name: 'escalate', scopes: ['manage'] }), 403, 'FORBIDDEN');

    expect((await call(a, sender.key, 'POST', '/v1/events', { event: 'auth.login.success', actor_id: 'u1' })).statusCode).toBe(202);
    expectError(await call(a, sender.key, 'GET', '/v1/events'), 403, 'FORBIDDEN');

    const listed = await call(a, manager.key, 'GET', '/v1/keys');
    expect(listed.statusCode).toBe(200);
    const keys = listed.json().keys as Record<string, unknown>[];
    expect(keys.map((k) => [k.name, k.scopes])).toEqual([
      [null, ['ingest', 'read', 'manage']],
      [null, ['ingest']],
      ['Reporting job', ['read']],
      ['Web app', ['ingest']],
      ['Provisioning', ['read', 'manage']],
    ]);
    for (const k of keys) expect(Object.keys(k).sort()).toEqual(['allowed_origins', 'created_at', 'id', 'kind', 'name', 'prefix', 'revoked_at', 'scopes']);
    expect(listed.body).not.toContain(reader.key.slice(11));
  });

  it('refuses unknown scopes (naming the scopes), wider publishable keys, long names, other accounts’ keys and keys past the limit', async () => {
    const acct = await a.account('pro');
    const other = await a.account('pro');
    const unknown = expectError(await call(a, acct.secret, 'POST', '/v1/keys', { name: 'x', scopes: ['read', 'admin'] }), 400, 'INVALID_REQUEST');
    expect(unknown.message).toBe('Unknown scope "admin"; the scopes are ingest, read, manage, subjects.');
    const wide = expectError(
      await call(a, acct.secret, 'POST', '/v1/keys', { kind: 'publishable', name: 'x', scopes: ['ingest', 'read'] }),
      400,
      'INVALID_REQUEST',
    );
    expect(wide.message).toContain('A publishable key only ever holds the "ingest" scope');
    expectError(await call(a, acct.secret, 'POST', '/v1/keys', { name: 'x', scopes: [] }), 400, 'INVALID_REQUEST');
    expectError(await call(a, acct.secret, 'POST', '/v1/keys', { name: 'x'.repeat(101), scopes: ['read'] }), 400, 'INVALID_REQUEST');
    expectError(await call(a, acct.secret, 'POST', '/v1/keys', { name: 'two\nlines', scopes: ['read'] }), 400, 'INVALID_REQUEST');

    const theirs = await create(other.secret, { name: 'theirs', scopes: ['read'] });
    expectError(await call(a, acct.secret, 'PATCH', `/v1/keys/${theirs.id}`, { scopes: ['manage'] }), 404, 'NOT_FOUND');
    expectError(await call(a, acct.secret, 'DELETE', `/v1/keys/${theirs.id}`), 404, 'NOT_FOUND');
    expect((await call(a, theirs.key, 'GET', '/v1/events')).statusCode).toBe(200);
    expectError(await call(a, acct.secret, 'PATCH', `/v1/keys/${theirs.id}`, {}), 400, 'INVALID_REQUEST');

    // t.account made two keys; revoked keys do not count.
    const made = await create(acct.secret, { name: 'spare', scopes: ['read'] });
    expect((await call(a, acct.secret, 'DELETE', `/v1/keys/${made.id}`)).statusCode).toBe(204);
    for (let i = 2; i < MAX_KEYS_PER_ACCOUNT; i++) await create(acct.secret, { name: `key ${i}`, scopes: ['read'] });
    const full = expectError(await call(a, acct.secret, 'POST', '/v1/keys', { name: 'one more', scopes: ['read'] }), 409, 'CONFLICT');
    expect(full.message).toContain(`at most ${MAX_KEYS_PER_ACCOUNT} keys`);
    expect((await a.services.store.audit.list(acct.id, { action: 'key.created' }, 100)).items).toHaveLength(MAX_KEYS_PER_ACCOUNT - 1);
  });

  it('a scope change and a revocation are in force on every instance from the answer on; a key may revoke itself', async () => {
    const acct = await a.account('pro');
    const worker = await create(acct.secret, { name: 'Worker', scopes: ['read'] });
    // Both instances have the key's verdict cached (the clock is manual: the cache never expires on its own).
    for (const t of [a, b, a, b]) expect((await call(t, worker.key, 'GET', '/v1/events')).statusCode).toBe(200);

    const patched = await call(a, acct.secret, 'PATCH', `/v1/keys/${worker.id}`, { scopes: ['ingest'], name: 'Sender' });
    expect(patched.json()).toMatchObject({ id: worker.id, scopes: ['ingest'], name: 'Sender' });
    for (const t of [b, a]) {
      expectError(await call(t, worker.key, 'GET', '/v1/events'), 403, 'FORBIDDEN');
      expect((await call(t, worker.key, 'POST', '/v1/events', { event: 'auth.login.success', actor_id: 'u1' })).statusCode).toBe(202);
    }

    expect((await call(a, acct.secret, 'DELETE', `/v1/keys/${worker.id}`)).statusCode).toBe(204);
    for (const t of [b, a]) expectError(await call(t, worker.key, 'POST', '/v1/events', { event: 'auth.login.success', actor_id: 'u1' }), 401, 'UNAUTHORIZED');
    expect((await call(b, acct.secret, 'DELETE', `/v1/keys/${worker.id}`)).statusCode).toBe(204);
    expectError(await call(a, acct.secret, 'PATCH', `/v1/keys/${worker.id}`, { scopes: ['read'] }), 409, 'CONFLICT');

    const self = await create(acct.secret, { name: 'Self', scopes: ['manage'] });
    expect((await call(b, self.key, 'GET', '/v1/keys')).statusCode).toBe(200);
    expect((await call(a, self.key, 'DELETE', `/v1/keys/${self.id}`)).statusCode).toBe(204);
    expectError(await call(b, self.key, 'GET', '/v1/keys'), 401, 'UNAUTHORIZED');

    const entries = await auditOf(acct.id, worker.id);
    expect(entries.map((e) => e.action)).toEqual(['key.created', 'key.scopes_changed', 'key.revoked']);
    const owner = { kind: 'key', label: acct.secret.slice(0, 11) };
    for (const e of entries) expect(e.actor).toMatchObject(owner);
    expect(entries[0]?.details).toEqual({ prefix: worker.prefix, kind: 'secret', scopes: ['read'], name: 'Worker' });
    expect(entries[1]?.changes).toEqual({ scopes: { before: ['read'], after: ['ingest'] }, name: { before: 'Worker', after: 'Sender' } });
    expect(entries[2]?.details).toMatchObject({ prefix: worker.prefix, scopes: ['ingest'], name: 'Sender' });
    const selfRevoked = await auditOf(acct.id, self.id);
    expect(selfRevoked.map((e) => [e.action, e.actor.id])).toEqual([
      ['key.created', entries[0]?.actor.id],
      ['key.revoked', self.id],
    ]);
    for (const key of [worker.key, self.key]) {
      expect(JSON.stringify(await auditOf(acct.id))).not.toContain(key.slice(11));
      expect(logged.join('')).not.toContain(key.slice(11));
    }
  });

  it('the admin API takes scopes and names, and records each change once with the operator as actor', async () => {
    const created = await admin('POST', '/admin/accounts', { name: 'Globex', plan: 'free' });
    expect(created.statusCode).toBe(201);
    const accountId = created.json().id as string;
    expect((await admin('PATCH', `/admin/accounts/${accountId}`, { plan: 'pro' })).statusCode).toBe(200);
    expect((await admin('PATCH', `/admin/accounts/${accountId}`, { plan: 'pro' })).statusCode).toBe(200);
    const keyRes = await admin('POST', `/admin/accounts/${accountId}/keys`, { kind: 'secret', scopes: ['read'], name: 'Auditor' });
    expect(keyRes.statusCode).toBe(201);
    const key = keyRes.json() as KeyView & { key: string; account_id: string };
    expect(key).toMatchObject({ account_id: accountId, scopes: ['read'], name: 'Auditor' });
    expectError(await admin('POST', `/admin/accounts/${accountId}/keys`, { kind: 'secret', scopes: ['root'] }), 400, 'INVALID_REQUEST');
    const legacy = (await admin('POST', `/admin/accounts/${accountId}/keys`, { kind: 'secret' })).json() as KeyView & { key: string };
    expect(legacy.scopes).toEqual(['ingest', 'read', 'manage']);

    expect((await call(b, key.key, 'GET', '/v1/events')).statusCode).toBe(200);
    const widened = await admin('PATCH', `/admin/keys/${key.id}`, { scopes: ['read', 'manage'] });
    expect(widened.json()).toMatchObject({ scopes: ['read', 'manage'], name: 'Auditor' });
    expect((await call(b, key.key, 'GET', '/v1/keys')).statusCode).toBe(200);
    expect((await admin('DELETE', `/admin/keys/${key.id}`)).statusCode).toBe(204);
    expectError(await call(b, key.key, 'GET', '/v1/events'), 401, 'UNAUTHORIZED');

    const entries = await auditOf(accountId);
    expect(entries.map((e) => [e.action, e.targetId])).toEqual([
      ['account.created', accountId],
      ['account.plan_changed', accountId],
      ['key.created', key.id],
      ['key.created', legacy.id],
      ['key.scopes_changed', key.id],
      ['key.revoked', key.id],
    ]);
    for (const e of entries) expect([e.actor, e.userAgent]).toEqual([{ kind: 'operator', id: 'operator', label: 'admin-api' }, 'ops-script']);
    expect(entries[0]?.details).toEqual({ name: 'Globex', plan: 'free' });
    expect(entries[1]?.changes).toEqual({ plan: { before: 'free', after: 'pro' } });
    expect(entries[4]?.changes).toEqual({ scopes: { before: ['read'], after: ['read', 'manage'] } });
    const text = JSON.stringify(entries) + logged.join('');
    for (const secret of [key.key, legacy.key]) expect(text).not.toContain(secret.slice(11));
  });

  it('a signed-in member manages keys only as an admin: a viewer and an analyst are refused with 403 on every keys route', async () => {
    const acct = await a.account('pro');
    const people = team(() => a);
    const existing = await create(acct.secret, { name: 'kept', scopes: ['read'] });
    for (const role of ['viewer', 'analyst'] as const) {
      await people.add(acct.id, `${role}-keys@example.com`, role);
      const session = await people.session(`${role}-keys@example.com`);
      expectError(await session.call('GET', '/v1/keys'), 403, 'FORBIDDEN');
      expectError(await session.call('POST', '/v1/keys', { name: 'escalate', scopes: ['manage'] }), 403, 'FORBIDDEN');
      expectError(await session.call('PATCH', `/v1/keys/${existing.id}`, { scopes: ['read', 'manage'] }), 403, 'FORBIDDEN');
      expectError(await session.call('DELETE', `/v1/keys/${existing.id}`), 403, 'FORBIDDEN');
    }
    await people.add(acct.id, 'admin-keys@example.com', 'admin');
    const admin = await people.session('admin-keys@example.com');
    const listed = await admin.call('GET', '/v1/keys');
    expect(listed.statusCode, listed.body).toBe(200);
    // The refused calls changed nothing.
    expect(listed.json().keys.find((k: KeyView) => k.id === existing.id)).toMatchObject({ scopes: ['read'], revoked_at: null });
    expect(listed.json().keys.some((k: KeyView) => k.name === 'escalate')).toBe(false);
  });
});
