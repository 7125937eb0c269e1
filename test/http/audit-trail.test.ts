import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail, CLI_OPERATOR } from '../../src/audit/trail.js';
import { Members } from '../../src/team/members.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { roomyApp, storeOpenAlert } from './support.js';

const PASSWORD = 'correct horse battery staple 7';

interface Item {
  id: string;
  at: string;
  actor: { kind: string; id: string | null; label: string | null };
  ip: string | null;
  user_agent: string | null;
  action: string;
  target: { kind: string; id: string } | null;
  changes: Record<string, { before: unknown; after: unknown }>;
  details: Record<string, unknown>;
}
type Headers = Record<string, string>;

describe('the audit trail of changes made through the API and the dashboard', () => {
  let t: TestApp;
  let logged = '';
  let accountId: string;
  let secret: string;
  let keyActor: Item['actor'];
  let other: { id: string; secret: string };
  let admin: Headers;
  let adminActor: Item['actor'];
  /** Every secret the tests saw: none may appear in an entry or a log line. */
  const secrets: string[] = [PASSWORD];

  beforeAll(async () => {
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => ((logged += chunk.toString()), done()) });
    t = await roomyApp({ VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32' }, { logger: pino({ level: 'debug' }, sink) });
    ({ id: accountId, secret } = await t.account('pro'));
    other = await t.account('pro');
    secrets.push(secret, other.secret);
    const key = (await t.services.store.accounts.listKeys(accountId)).find((k) => k.kind === 'secret');
    keyActor = { kind: 'key', id: key?.id ?? '', label: key?.prefix ?? '' };
    const members = new Members(t.services.store, new AuditTrail(t.services.store.audit, t.clock), t.clock);
    for (const [email, role] of [
      ['admin@example.com', 'admin'],
      ['viewer@example.com', 'viewer'],
    ] as const) {
      const added = await members.add({ accountId, actor: CLI_OPERATOR, ip: null, userAgent: null }, { email, role, password: PASSWORD });
      expect(added.ok).toBe(true);
    }
    admin = await session('admin@example.com');
    const user = await t.services.store.members.findUserByEmail('admin@example.com');
    adminActor = { kind: 'member', id: user?.id ?? '', label: 'admin@example.com' };
  });
  afterAll(() => t.close());

  async function session(email: string): Promise<Headers> {
    const res = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/sign-in', payload: { email, password: PASSWORD } });
    expect(res.statusCode).toBe(201);
    return { cookie: String(res.headers['set-cookie']).split(';')[0] as string, 'x-csrf-token': res.json<{ csrf_token: string }>().csrf_token };
  }

  const call = async (headers: Headers, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) => {
    const res = await t.vigil.app.inject({ method, url, headers: { ...headers, 'user-agent': 'audit-test/1' }, ...(payload ? { payload } : {}) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.statusCode === 204 ? {} : (res.json() as Record<string, unknown>);
  };
  const audit = async (headers: Headers, query = '') => {
    const res = await t.vigil.app.inject({ method: 'GET', url: `/v1/audit${query}`, headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ data: Item[]; next_cursor: string | null }>();
  };
  /** The entries a step wrote, oldest first. */
  const entriesOf = async (step: () => Promise<unknown>): Promise<Item[]> => {
    const top = (await audit(bearer(secret), '?limit=1')).data[0]?.id ?? '';
    await step();
    return (await audit(bearer(secret), '?limit=500')).data.filter((e) => e.id > top).reverse();
  };
  const newAlert = (account = accountId): Promise<string> => storeOpenAlert(t, account);

  /**
   * Each kind of change, made by `who`: exactly one entry, with its action, target and before/after.
   */
  async function everyKindOfChange(who: Headers, actor: Item['actor']): Promise<void> {
    const one = async (step: () => Promise<unknown>, expected: Partial<Item>) => {
      const entries = await entriesOf(step);
      expect(entries, JSON.stringify(entries)).toHaveLength(1);
      expect(entries[0]).toMatchObject({ actor, ip: '127.0.0.1', user_agent: 'audit-test/1', ...expected });
      return entries[0] as Item;
    };

    const alert = await newAlert();
    await one(() => call(who, 'PATCH', `/v1/alerts/${alert}`, { status: 'acknowledged' }), {
      action: 'alert.status_changed',
      target: { kind: 'alert', id: alert },
      changes: { status: { before: 'open', after: 'acknowledged' } },
    });
    await one(() => call(who, 'POST', `/dashboard/api/alerts/${alert}/notes`, { status: 'acknowledged', note: 'looking into it' }), {
      action: 'alert.note_added',
      target: { kind: 'alert', id: alert },
      details: expect.objectContaining({ note: 'looking into it', status: 'acknowledged' }) as Item['details'],
    });

    const ips = [{ value: '10.0.0.0/8', detectors: ['impossible_travel'] }];
    await call(who, 'PATCH', '/v1/settings', { risk: null, allowlists: null });
    await one(() => call(who, 'PATCH', '/v1/settings', { risk: { challenge: 40 }, allowlists: { ips } }), {
      action: 'settings.changed',
      target: null,
      changes: { risk: { before: null, after: { challenge: 40 } }, allowlists: { before: null, after: { ips } } },
    });
    expect(await entriesOf(() => call(who, 'PATCH', '/v1/settings', { allowlists: { ips } }))).toEqual([]);
    await call(who, 'PUT', '/v1/threat-models/sigma-fields', { fields: {} });
    await one(() => call(who, 'PUT', '/v1/threat-models/sigma-fields', { fields: { Tenant: 'metadata.org.id' } }), {
      action: 'settings.changed',
      changes: { sigma_fields: expect.objectContaining({ after: { Tenant: 'metadata.org.id' } }) as { before: unknown; after: unknown } },
    });

    const model = {
      name: 'Root sign-in',
      match: { event: 'auth.login.success', where: { field: 'actor_id', op: 'equals', value: 'root' } },
      outcome: { alert: 'custom.root', severity: 'high' },
    };
    let modelId = '';
    const created = await one(async () => (modelId = String((await call(who, 'POST', '/v1/threat-models', model)).id)), {
      action: 'threat_model.created',
      details: { version: 1 },
    });
    expect(created.target).toEqual({ kind: 'threat_model', id: modelId });
    expect(created.changes.name).toEqual({ before: null, after: 'Root sign-in' });
    expect(created.changes).not.toHaveProperty('suspended');
    await one(() => call(who, 'PATCH', `/v1/threat-models/${modelId}`, { enabled: false }), {
      action: 'threat_model.disabled',
      changes: { enabled: { before: true, after: false } },
      details: { version: 2 },
    });
    await one(() => call(who, 'PATCH', `/v1/threat-models/${modelId}`, { enabled: true }), { action: 'threat_model.enabled', details: { version: 3 } });
    await one(() => call(who, 'PUT', `/v1/threat-models/${modelId}`, { ...model, name: 'Root' }), {
      action: 'threat_model.updated',
      changes: { name: { before: 'Root sign-in', after: 'Root' } },
      details: { version: 4 },
    });
    await one(() => call(who, 'DELETE', `/v1/threat-models/${modelId}`), {
      action: 'threat_model.deleted',
      target: { kind: 'threat_model', id: modelId },
      details: { version: 4 },
    });

    let hook: Record<string, unknown> = {};
    const hookCreated = await one(async () => (hook = await call(who, 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/audit', description: 'pager' })), {
      action: 'webhook.created',
      details: {},
    });
    secrets.push(String(hook.secret));
    expect(hookCreated.changes.url).toEqual({ before: null, after: 'http://127.0.0.1:9/audit' });
    await one(() => call(who, 'PATCH', `/v1/webhooks/${String(hook.id)}`, { description: 'on call', enabled: false }), {
      action: 'webhook.updated',
      target: { kind: 'webhook', id: String(hook.id) },
      changes: { description: { before: 'pager', after: 'on call' }, enabled: { before: true, after: false } },
    });
    await one(async () => secrets.push(String((await call(who, 'POST', `/v1/webhooks/${String(hook.id)}/rotate-secret`, { overlap_hours: 1 })).secret)), {
      action: 'webhook.secret_rotated',
      changes: {},
      details: { overlap_hours: 1 },
    });
    await one(() => call(who, 'DELETE', `/v1/webhooks/${String(hook.id)}`), {
      action: 'webhook.deleted',
      changes: expect.objectContaining({ url: { before: 'http://127.0.0.1:9/audit', after: null } }) as Item['changes'],
    });
  }

  it('records exactly one entry for each kind of change a signed-in member makes, with its before and after', async () => {
    await everyKindOfChange(admin, adminActor);
  });

  it('records the API key as the actor of changes made with it', async () => {
    await everyKindOfChange(bearer(secret), keyActor);
  });

  it('never holds a secret in an entry or a log line', async () => {
    const all = JSON.stringify((await audit(bearer(secret), '?limit=500')).data);
    expect(all).toContain('webhook.secret_rotated');
    expect(logged).toContain('"level"');
    for (const s of secrets) {
      expect(all).not.toContain(s);
      expect(logged).not.toContain(s);
    }
  });

  it('filters by actor, action, target and time, pages with the cursor, and never lists another account’s entries', async () => {
    const alert = await newAlert();
    const since = new Date(t.clock.now() + 1_000).toISOString();
    t.clock.advance(2_000);
    await call(bearer(secret), 'PATCH', `/v1/alerts/${alert}`, { status: 'resolved' });
    await call(admin, 'PATCH', `/v1/alerts/${alert}`, { status: 'open' });
    t.clock.advance(2_000);
    const until = new Date(t.clock.now() - 1_000).toISOString();
    await call(admin, 'PATCH', `/v1/settings`, { risk: { challenge: 45 } });
    const theirs = await newAlert(other.id);
    await call(bearer(other.secret), 'PATCH', `/v1/alerts/${theirs}`, { status: 'resolved' });

    const byTarget = await audit(bearer(secret), `?target=${alert}`);
    expect(byTarget.data.map((e) => [e.actor.kind, e.changes.status?.after])).toEqual([
      ['member', 'open'],
      ['key', 'resolved'],
    ]);
    const byActor = await audit(bearer(secret), `?actor=${adminActor.id}&since=${since}`);
    expect(byActor.data.map((e) => e.action)).toEqual(['settings.changed', 'alert.status_changed']);
    expect((await audit(bearer(secret), `?actor=${keyActor.id}&action=alert.status_changed&since=${since}`)).data).toHaveLength(1);
    for (const prefix of ['alert.', 'alert.*'])
      expect(new Set((await audit(bearer(secret), `?action=${prefix}`)).data.map((e) => e.action))).toEqual(
        new Set(['alert.status_changed', 'alert.note_added']),
      );
    expect((await audit(bearer(secret), `?since=${since}&until=${until}`)).data.map((e) => e.target?.id)).toEqual([alert, alert]);

    const all = (await audit(bearer(secret), '?limit=500')).data;
    const paged: Item[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = await audit(bearer(secret), `?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(7);
      paged.push(...page.data);
      cursor = page.next_cursor;
    }
    expect(paged.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(all.length).toBeGreaterThan(14);

    expect(all.some((e) => e.target?.id === theirs)).toBe(false);
    expect((await audit(bearer(secret), `?target=${theirs}`)).data).toEqual([]);
    expect((await audit(bearer(other.secret), `?target=${theirs}`)).data).toHaveLength(1);
  });

  it('lets viewers and read keys read the trail, and no one change or delete it', async () => {
    const viewer = await session('viewer@example.com');
    expect((await audit({ cookie: viewer.cookie as string })).data.length).toBeGreaterThan(0);
    const accounts = t.services.store.accounts;
    for (const [scopes, status] of [
      [['read'], 200],
      [['ingest'], 403],
    ] as const) {
      const created = await t.vigil.accounts.createKey(accountId, 'secret');
      if (!created.ok) throw new Error(created.message);
      await accounts.updateKey(created.value.record.id, { scopes });
      const res = await t.vigil.app.inject({ method: 'GET', url: '/v1/audit', headers: bearer(created.value.key) });
      expect(res.statusCode, res.body).toBe(status);
    }
    const [entry] = (await audit(bearer(secret), '?limit=1')).data;
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.vigil.app.inject({ method, url: '/v1/audit', headers: bearer(secret), payload: {} });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET');
    }
    expect((await audit(bearer(secret), '?limit=1')).data[0]).toEqual(entry);
    const bad = await t.vigil.app.inject({ method: 'GET', url: '/v1/audit?since=yesterday', headers: bearer(secret) });
    expect(bad.statusCode).toBe(400);
  });
});
