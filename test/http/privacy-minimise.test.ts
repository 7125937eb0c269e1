/**
 * Minimisation before storage, through the real API on both modes: with each privacy setting on,
 * no stored byte of the account's event rows, alert rows, idempotency rows or search index holds
 * the value as sent; with the defaults, the same values are there (so the checks can fail).
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSecret, pseudonymOf } from '../../src/privacy/pseudonym.js';
import type { Database } from '../../src/storage/schema.js';
import { bearer, SCALE_OUT, type TestApp } from '../helpers/app.js';
import { team } from './team-support.js';
import { allEvents, expectError, getJson, postEvent, roomyApp } from './support.js';

const MASTER = 'test-pseudonym-master-secret-0123456789';

const EVENT = {
  event: 'auth.login.failure',
  actor_id: 'zqxactor7731',
  email: 'Wibble.Quux@example.org',
  ip: '2001:db8:1:2:dead:beef:cafe:f00d',
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0 FlibbertyAgent',
  metadata: {
    device_id: 'devzorp991',
    password: 'hunter2secret',
    card: 'card 4111 1111 1111 1111 on file',
    auth: 'Bearer abcdefghijklmnop1234',
    command: 'mysql -u root -pS3cretPass shop',
    internal_ref: 'keepmeout5',
    note: 'employee EMP-123456 asked',
    order: '1234567890123', // thirteen digits that fail the Luhn check: kept
  },
};
const EVENT_V4 = { event: 'auth.login.failure', actor_id: 'zqxactor7731', ip: '198.51.100.77' };

/** Texts of the event as sent that must not be stored under the setting, by what they are. */
const RAW = {
  actor: 'zqxactor7731',
  email: 'wibble.quux',
  ipv6: 'dead:beef',
  ipv4: '198.51.100.77',
  ua: 'FlibbertyAgent',
  device: 'devzorp991',
  password: 'hunter2secret',
  card: '4111 1111 1111 1111',
  bearer: 'abcdefghijklmnop1234',
  command: 'S3cretPass',
  tenantKey: 'keepmeout5',
  tenantPattern: 'EMP-123456',
};
/** Single words of them, as the search index splits text. */
const RAW_WORDS = ['zqxactor7731', 'wibble', 'quux', 'dead', 'flibbertyagent', 'devzorp991', 'hunter2secret', 'keepmeout5', 'ps3cretpass'];

const dbOf = (t: TestApp) => (t.services.store as unknown as { db: Kysely<Database> }).db;

/** Every stored text of the account's rows: events (every column), alerts and idempotency answers. */
async function storedText(t: TestApp, accountId: string): Promise<string> {
  const db = dbOf(t);
  const events = await db.selectFrom('events').selectAll().where('account_id', '=', accountId).execute();
  const alerts = await db.selectFrom('alerts').selectAll().where('account_id', '=', accountId).execute();
  const idem = await db.selectFrom('idempotency').selectAll().where('account_id', '=', accountId).execute();
  expect(events.length).toBeGreaterThan(0);
  return JSON.stringify([events, alerts, idem]).toLowerCase();
}

/** How many of the account's events the search index finds for one word. */
async function searchHits(t: TestApp, key: string, word: string): Promise<number> {
  const res = await getJson(t, key, `/v1/events?q=${encodeURIComponent(word)}`);
  expect(res.statusCode).toBe(200);
  return (res.json().data as unknown[]).length;
}

/** Words the storage's own index holds for the account's events (beside the API: the index itself). */
async function indexHolds(t: TestApp, accountId: string, word: string): Promise<boolean> {
  const db = dbOf(t);
  if (SCALE_OUT) {
    const { PG_EVENT_TSVECTOR } = await import('../../src/storage/search-text.js');
    const rows = await sql<{
      n: number;
    }>`select count(*)::int as n from events where account_id = ${accountId} and ${sql.raw(PG_EVENT_TSVECTOR)} @@ to_tsquery('simple', ${word})`.execute(db);
    return (rows.rows[0]?.n ?? 0) > 0;
  }
  const rows = await sql<{
    n: number;
  }>`select count(*) as n from events_fts f join events e on e.rowid = f.rowid where e.account_id = ${accountId} and events_fts match ${`"${word}"`}`.execute(
    db,
  );
  return Number(rows.rows[0]?.n ?? 0) > 0;
}

describe('minimisation before storage', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await roomyApp({ VIGIL_PSEUDONYM_SECRET: MASTER });
  });
  afterAll(() => t.close());

  const patch = (key: string, payload: unknown) =>
    t.vigil.app.inject({ method: 'PATCH', url: '/v1/settings', headers: bearer(key), payload: payload as object });

  async function accountWith(privacy: unknown) {
    const acct = await t.account('pro');
    if (privacy !== undefined) expect((await patch(acct.secret, { privacy })).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await postEvent(t, acct.secret, { ...EVENT, event_id: `e${i}` })).statusCode).toBe(202);
    expect((await postEvent(t, acct.secret, EVENT_V4)).statusCode).toBe(202);
    return acct;
  }

  it('with the defaults, every value is stored as sent and found by search (the checks below can fail)', async () => {
    const acct = await accountWith(undefined);
    const text = await storedText(t, acct.id);
    for (const raw of Object.values(RAW)) expect(text, raw).toContain(raw.toLowerCase());
    for (const word of RAW_WORDS) expect(await indexHolds(t, acct.id, word), word).toBe(true);
    expect(await searchHits(t, acct.secret, 'zqxactor7731')).toBe(4);
  });

  it('pseudonymises actors, emails and devices, truncates addresses, drops the user agent and scrubs metadata: no stored byte holds them', async () => {
    const acct = await accountWith({
      ip: 'truncate',
      actor_id: 'pseudonym',
      email: 'pseudonym',
      device_id: 'pseudonym',
      user_agent: 'drop',
      scrub: { builtin: true, keys: ['internal_*'], patterns: ['EMP-[0-9]{6}'] },
    });
    const text = await storedText(t, acct.id);
    for (const raw of Object.values(RAW)) expect(text, raw).not.toContain(raw.toLowerCase());
    for (const word of RAW_WORDS) expect(await indexHolds(t, acct.id, word), word).toBe(false);
    expect(await searchHits(t, acct.secret, 'zqxactor7731')).toBe(0);

    const secret = accountSecret(MASTER, acct.id);
    const actor = pseudonymOf(secret, 'actor_id', 'zqxactor7731');
    const events = await allEvents(t, acct.secret);
    expect(events).toHaveLength(4);
    const v6 = events.find((e) => e.ip === '2001:db8:1::') as Record<string, unknown>;
    expect(v6).toMatchObject({
      actor_id: actor,
      email: pseudonymOf(secret, 'email', 'wibble.quux@example.org'),
      metadata: {
        device_id: pseudonymOf(secret, 'device_id', 'devzorp991'),
        password: '***',
        card: 'card *** on file',
        auth: 'Bearer ***',
        command: 'mysql -u root -p*** shop',
        internal_ref: '***',
        note: '***',
        order: '1234567890123',
      },
    });
    expect(v6.user_agent).toBeUndefined();
    // Enrichment read the agent before it was dropped.
    expect((v6.enrichment as { user_agent?: { browser?: string } }).user_agent?.browser).toBe('Firefox');
    expect(events.find((e) => e.ip === '198.51.100.0')).toMatchObject({ actor_id: actor });
    // The same input gives the same pseudonym: search and the entity page find the actor by it.
    expect(await searchHits(t, acct.secret, `actor_id:"${actor}"`)).toBe(4);
    expect(await searchHits(t, acct.secret, `"${actor}"`)).toBe(4);
  });

  it('pseudonymises addresses: no stored byte holds them, and the address is the same pseudonym on every event', async () => {
    const acct = await accountWith({ ip: 'pseudonym' });
    const text = await storedText(t, acct.id);
    expect(text).not.toContain(RAW.ipv6);
    expect(text).not.toContain(RAW.ipv4);
    expect(text).not.toContain('2001:db8:1::');
    expect(await indexHolds(t, acct.id, 'dead')).toBe(false);
    const secret = accountSecret(MASTER, acct.id);
    const events = await allEvents(t, acct.secret);
    const v6 = pseudonymOf(secret, 'ip', EVENT.ip);
    expect(events.filter((e) => e.ip === v6)).toHaveLength(3);
    expect(events.filter((e) => e.ip === pseudonymOf(secret, 'ip', EVENT_V4.ip))).toHaveLength(1);
    expect((events[0]?.enrichment as { network?: { ip: string } }).network?.ip).toMatch(/^p1:/);
  });

  it('keeps accounts apart: one account minimising leaves another as sent, and their pseudonyms differ', async () => {
    const a = await accountWith({ actor_id: 'pseudonym' });
    const b = await accountWith({ actor_id: 'pseudonym' });
    const c = await accountWith(undefined);
    const actorOf = async (key: string) => (await allEvents(t, key))[0]?.actor_id;
    const [ia, ib, ic] = [await actorOf(a.secret), await actorOf(b.secret), await actorOf(c.secret)];
    expect(ia).toMatch(/^p1:/);
    expect(ib).toMatch(/^p1:/);
    expect(ia).not.toBe(ib);
    expect(ic).toBe('zqxactor7731');
  });
});

describe('privacy settings', () => {
  let t: TestApp;
  let plain: TestApp;
  const people = team(() => t);
  beforeAll(async () => {
    t = await roomyApp({ VIGIL_PSEUDONYM_SECRET: MASTER });
    plain = await roomyApp();
  });
  afterAll(async () => {
    await t.close();
    await plain.close();
  });

  const patch = (app: TestApp, key: string, payload: unknown) =>
    app.vigil.app.inject({ method: 'PATCH', url: '/v1/settings', headers: bearer(key), payload: payload as object });

  it('shows the defaults and the effective settings, and resets with null', async () => {
    const acct = await t.account('pro');
    const before = (await getJson(t, acct.secret, '/v1/settings')).json();
    expect(before.privacy).toEqual({});
    expect(before.effective.privacy).toEqual(before.defaults.privacy);
    expect(before.effective.pseudonyms_available).toBe(true);
    const changed = await patch(t, acct.secret, { privacy: { ip: 'truncate' } });
    expect(changed.json().effective.privacy).toMatchObject({ ip: 'truncate', actor_id: 'keep' });
    expect((await patch(t, acct.secret, { privacy: null })).json().privacy).toEqual({});
  });

  it('refuses bad settings with every problem and its field, and changes nothing', async () => {
    const acct = await t.account('pro');
    const bad = expectError(
      await patch(t, acct.secret, { privacy: { ip: 'hash', colour: 1, scrub: { keys: ['x'.repeat(129)], patterns: ['(unclosed', 'a{1,5000}'] } } }),
      400,
      'INVALID_REQUEST',
    );
    const fields = (bad.details ?? []).map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['privacy.ip', 'privacy.scrub.keys.0']));
    expect(JSON.stringify(bad.details)).toContain('colour');
    const regex = expectError(
      await patch(t, acct.secret, { privacy: { scrub: { patterns: ['(unclosed', 'a{1,1000}b{1,1000}c{1,1000}'] } } }),
      400,
      'INVALID_REQUEST',
    );
    expect((regex.details ?? []).map((d) => d.field)).toEqual(['privacy.scrub.patterns.0', 'privacy.scrub.patterns.1']);
    expect((await getJson(t, acct.secret, '/v1/settings')).json().privacy).toEqual({});
  });

  it('refuses pseudonyms when the instance has no master secret, and says who sets it', async () => {
    const acct = await plain.account('pro');
    const body = expectError(await patch(plain, acct.secret, { privacy: { email: 'pseudonym' } }), 400, 'INVALID_REQUEST');
    expect(body.details).toEqual([{ field: 'privacy.email', message: expect.stringContaining('VIGIL_PSEUDONYM_SECRET') }]);
    expect((await getJson(plain, acct.secret, '/v1/settings')).json().effective.pseudonyms_available).toBe(false);
    expect((await patch(plain, acct.secret, { privacy: { ip: 'truncate' } })).statusCode).toBe(200);
  });

  it('records the change in the audit trail', async () => {
    const acct = await t.account('pro');
    expect((await patch(t, acct.secret, { privacy: { user_agent: 'drop' } })).statusCode).toBe(200);
    const audit = (await getJson(t, acct.secret, '/v1/audit')).json();
    const entry = (audit.data as { action: string; changes: Record<string, unknown> }[]).find((e) => e.action === 'settings.changed');
    expect(entry?.changes).toHaveProperty('privacy');
  });

  it('an analyst can change risk settings but not privacy ones; an admin can', async () => {
    const acct = await t.account('pro');
    await people.add(acct.id, `analyst-${acct.id}@example.com`, 'analyst');
    await people.add(acct.id, `admin-${acct.id}@example.com`, 'admin');
    const analyst = await people.session(`analyst-${acct.id}@example.com`);
    const admin = await people.session(`admin-${acct.id}@example.com`);
    expect((await analyst.call('PATCH', '/v1/settings', { risk: { challenge: 40 } })).statusCode).toBe(200);
    const refused = expectError(await analyst.call('PATCH', '/v1/settings', { privacy: { ip: 'truncate' } }), 403, 'FORBIDDEN');
    expect(refused.message).toContain('privacy');
    expect((await admin.call('PATCH', '/v1/settings', { privacy: { ip: 'truncate' } })).statusCode).toBe(200);
    expect((await analyst.call('GET', '/v1/settings')).json().privacy).toEqual({ ip: 'truncate' });
  });
});

describe('retention settings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await roomyApp();
  });
  afterAll(() => t.close());

  it('takes days per kind of data within the plan, refuses more with the plan named, and shows the effective days', async () => {
    const acct = await t.account('pro');
    const patch = (payload: unknown) => t.vigil.app.inject({ method: 'PATCH', url: '/v1/settings', headers: bearer(acct.secret), payload: payload as object });
    const before = (await getJson(t, acct.secret, '/v1/settings')).json();
    expect(before.effective.retention).toEqual({ events: 90, alerts: 90, audit: 90 });
    expect(before.defaults.retention_max_days).toBe(90);
    const ok = await patch({ retention: { events_days: 30, alerts_days: 60 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().effective.retention).toEqual({ events: 30, alerts: 60, audit: 90 });
    const bad = expectError(await patch({ retention: { events_days: 91, audit_days: 0, logs_days: 3 } }), 400, 'INVALID_REQUEST');
    expect(bad.details?.map((d) => d.field).sort()).toEqual(['retention.audit_days', 'retention.logs_days']);
    const over = expectError(await patch({ retention: { alerts_days: 365 } }), 400, 'INVALID_REQUEST');
    expect(over.details).toEqual([{ field: 'retention.alerts_days', message: 'retention.alerts_days is 365, more than the 90 days the pro plan keeps' }]);
    expect((await getJson(t, acct.secret, '/v1/settings')).json().retention).toEqual({ events_days: 30, alerts_days: 60 });
    expect((await patch({ retention: null })).json().effective.retention).toEqual({ events: 90, alerts: 90, audit: 90 });
  });
});
