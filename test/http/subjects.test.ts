import type { LightMyRequestResponse } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../../src/http/guards.js';
import { SubjectMatcher } from '../../src/privacy/subject.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { expectError, postEvent, roomyApp, stateTexts } from './support.js';

type Json = any;

/** One person's identifiers, sent to two accounts alike. */
const ACTOR = 'zqdanaerasez';
const EMAIL = 'Dana.Erase@example.org';
const IP = '198.51.100.7';
const DEVICE = 'dev-zq-4417-erase';
const RAW = [ACTOR, EMAIL, EMAIL.toLowerCase(), IP, DEVICE];
/** Someone else in the same account, who must keep everything. */
const BYSTANDER = 'bystanderqq';

const ENV = { VIGIL_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32', VIGIL_WEBHOOK_POLL_MS: '60000' };

const call = (t: TestApp, key: string, method: 'GET' | 'POST', url: string, payload?: object): Promise<LightMyRequestResponse> =>
  t.vigil.app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload }) });

const IDENTIFIERS = [
  { kind: 'actor_id', value: ACTOR },
  { kind: 'email', value: EMAIL },
  { kind: 'ip', value: IP },
  { kind: 'device_id', value: DEVICE },
];

/** Every row of every table (PostgreSQL: of the app's schema) as JSON text with its account id. */
async function storedRows(t: TestApp): Promise<{ table: string; account: unknown; text: string }[]> {
  const db = (t.services.store as unknown as { db: Kysely<any> }).db;
  const tables =
    t.services.store.kind === 'postgres'
      ? (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db)).rows
      : (
          await sql<{
            name: string;
          }>`select name from sqlite_master where type = 'table' and name not like 'events_fts%' and name not like 'events_trigram%'`.execute(db)
        ).rows;
  const out: { table: string; account: unknown; text: string }[] = [];
  for (const { name } of tables) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)).rows;
    for (const row of rows) out.push({ table: name, account: row.account_id, text: JSON.stringify(row) });
  }
  return out;
}

const matcher = new SubjectMatcher(IDENTIFIERS.map((i) => ({ kind: i.kind as 'actor_id', value: i.value })));
const mentionsAny = (text: string) => RAW.some((raw) => text.includes(raw)) || matcher.mentions(text);

describe('data subjects: erasure and export', () => {
  let t: TestApp;
  let a: { id: string; secret: string };
  let b: { id: string; secret: string };
  let aSubjects: string;
  let bSubjects: string;
  let alertA: string;

  /** Events, an alert with a note, an audit entry and a pending webhook delivery mentioning the subject, in one account. */
  async function populate(acct: { id: string; secret: string }): Promise<string> {
    const hook = await call(t, acct.secret, 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', description: 'outbox' });
    expect(hook.statusCode, hook.body).toBe(201);
    for (let i = 0; i < 3; i++) {
      const failure = {
        event: 'auth.login.failure',
        actor_id: ACTOR,
        email: EMAIL,
        ip: IP,
        metadata: { device_id: DEVICE, extra: { note: `tried as ${EMAIL}` } },
      };
      expect((await postEvent(t, acct.secret, failure)).statusCode).toBe(202);
    }
    const success = { event: 'auth.login.success', actor_id: ACTOR, ip: IP, metadata: { device_id: DEVICE } };
    expect((await postEvent(t, acct.secret, success)).statusCode).toBe(202);
    // An event about someone else that names the subject in its metadata goes too; one that does not stays.
    const mentioning = { event: 'admin.user.updated', actor_id: BYSTANDER, ip: '203.0.113.7', metadata: { target: ACTOR } };
    expect((await postEvent(t, acct.secret, mentioning)).statusCode).toBe(202);
    expect((await postEvent(t, acct.secret, { event: 'auth.login.success', actor_id: BYSTANDER, ip: '203.0.113.7' })).statusCode).toBe(202);
    // An alert about the subject (its webhook delivery waits in the outbox), with a note naming them.
    expect((await postEvent(t, acct.secret, { event: 'auth.mfa.disabled', actor_id: ACTOR, ip: IP })).statusCode).toBe(202);
    const alerts = (await call(t, acct.secret, 'GET', `/v1/alerts?actor_id=${ACTOR}`)).json().data as Json[];
    expect(alerts.length).toBeGreaterThan(0);
    const alertId = alerts[0].id as string;
    await t.services.store.alerts.addAlertNote({
      id: `not_${acct.id.slice(-8)}`,
      accountId: acct.id,
      alertId,
      status: 'acknowledged',
      note: `Called ${EMAIL}; ${ACTOR} confirmed the phone from ${IP}.`,
      createdAt: t.clock.now(),
      author: { kind: 'key', id: 'key_x', label: 'vgl_sk_x' },
    });
    await t.services.store.audit.append({
      id: `aud_${acct.id.slice(-8)}`,
      accountId: acct.id,
      at: t.clock.now(),
      actor: { kind: 'key', id: 'key_x', label: 'vgl_sk_x' },
      ip: IP,
      userAgent: null,
      action: 'alert.status_changed',
      targetKind: 'alert',
      targetId: alertId,
      changes: { status: { before: 'open', after: 'acknowledged' } },
      details: { actor_id: ACTOR, email: EMAIL },
    });
    return alertId;
  }

  async function subjectsKey(acct: { secret: string }): Promise<string> {
    const res = await call(t, acct.secret, 'POST', '/v1/keys', { name: 'privacy', scopes: ['subjects'] });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().key as string;
  }

  async function finished(key: string, id: string): Promise<Json> {
    let job: Json;
    await until(async () => {
      job = (await call(t, key, 'GET', `/v1/subjects/jobs/${id}`)).json().job;
      return job.status === 'done';
    }, 'erasure job done');
    return job;
  }

  beforeAll(async () => {
    t = await roomyApp(ENV);
    a = await t.account('pro');
    b = await t.account('pro');
    alertA = await populate(a);
    await populate(b);
    aSubjects = await subjectsKey(a);
    bSubjects = await subjectsKey(b);
  }, 60_000);
  afterAll(() => t?.close());

  it('needs the subjects scope on a key, and admin or owner in the dashboard', async () => {
    expectError(await call(t, a.secret, 'POST', '/v1/subjects/erase', { identifiers: IDENTIFIERS }), 403, 'FORBIDDEN');
    expectError(await call(t, a.secret, 'POST', '/v1/subjects/export', { identifiers: IDENTIFIERS }), 403, 'FORBIDDEN');
    expectError(await call(t, a.secret, 'GET', '/v1/subjects/jobs'), 403, 'FORBIDDEN');
    const member = (role: 'viewer' | 'analyst' | 'admin' | 'owner') => ({
      kind: 'member' as const,
      userId: 'usr_1',
      email: 'x@example.com',
      role,
      sessionId: 's',
    });
    expect(refusal(member('analyst'), 'subjects')).toMatch(/needs admin/);
    expect(refusal(member('admin'), 'subjects')).toBeUndefined();
    expect(refusal(member('owner'), 'subjects')).toBeUndefined();
    expectError(await call(t, aSubjects, 'POST', '/v1/subjects/erase', { identifiers: [{ kind: 'phone', value: '1' }] }), 400, 'INVALID_REQUEST');
    expectError(await call(t, aSubjects, 'POST', '/v1/subjects/erase', { identifiers: [{ kind: 'actor_id', value: '   ' }] }), 400, 'INVALID_REQUEST');
    // The suppression list holds keyed hashes: an instance without a master secret refuses it (and starts no job).
    const unkeyed = expectError(
      await call(t, aSubjects, 'POST', '/v1/subjects/erase', { identifiers: IDENTIFIERS, suppress_days: 30 }),
      400,
      'INVALID_REQUEST',
    );
    expect(unkeyed.message).toMatch(/VIGIL_PSEUDONYM_SECRET/);
  });

  it('exports every event, alert and note of the account that mentions the subject, as NDJSON', async () => {
    const res = await call(t, aSubjects, 'POST', '/v1/subjects/export', { identifiers: IDENTIFIERS });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const events = lines.filter((l) => l.type === 'event');
    // Three failures, a success, the admin event naming the subject and the MFA change; not the bystander's own login.
    expect(events).toHaveLength(6);
    expect(events.some((e) => e.actor_id === BYSTANDER && e.metadata?.target === ACTOR)).toBe(true);
    expect(lines.filter((l) => l.type === 'alert').map((l) => l.id)).toContain(alertA);
    expect(lines.filter((l) => l.type === 'note')).toHaveLength(1);
    // Another account's identical rows are not in it.
    const bEvents = (await call(t, b.secret, 'GET', `/v1/events?actor_id=${ACTOR}`)).json().data as Json[];
    const ids = new Set(lines.map((l) => l.id));
    expect(bEvents.length).toBeGreaterThan(0);
    for (const e of bEvents) expect(ids.has(e.id)).toBe(false);
    // The audit entry of the export holds hints, not the identifiers.
    const audit = (await t.services.store.audit.list(a.id, { action: 'subject.exported' }, 10)).items;
    expect(audit).toHaveLength(1);
    expect(mentionsAny(JSON.stringify(audit[0]))).toBe(false);
  });

  it("erases the subject from the account's rows, state and outbox, and leaves the other account's alone", async () => {
    expect((await stateTexts(t, a.id)).some(mentionsAny)).toBe(true);
    const before = await storedRows(t);
    expect(before.some((r) => r.table === 'webhook_deliveries' && r.account === a.id && mentionsAny(r.text))).toBe(true);

    const res = await call(t, aSubjects, 'POST', '/v1/subjects/erase', { identifiers: IDENTIFIERS });
    expect(res.statusCode, res.body).toBe(202);
    const submitted = res.json().job;
    expect(submitted).toMatchObject({ kind: 'erase', identifiers: [{ kind: 'actor_id' }, { kind: 'email' }, { kind: 'ip' }, { kind: 'device_id' }] });
    expect(mentionsAny(JSON.stringify(submitted))).toBe(false);
    expectError(await call(t, bSubjects, 'GET', `/v1/subjects/jobs/${submitted.id}`), 404, 'NOT_FOUND');

    const job = await finished(aSubjects, submitted.id);
    expect(job.progress).toMatchObject({ step: null, done_steps: job.progress.total_steps });
    expect(job.counts.events).toBe(6);
    expect(job.counts.alerts).toBeGreaterThan(0);
    expect(job.counts.notes).toBe(1);
    expect(job.counts.deliveries).toBeGreaterThan(0);
    expect(job.counts.state_keys).toBeGreaterThan(0);
    expect(mentionsAny(JSON.stringify(job))).toBe(false);

    // No stored byte of account A mentions the subject; account B's identical rows are all there.
    const after = await storedRows(t);
    const left = after.filter((r) => r.account !== b.id && mentionsAny(r.text));
    expect(left.map((r) => `${r.table}: ${r.text.slice(0, 200)}`)).toEqual([]);
    const kept = (table: string) => after.filter((r) => r.table === table && r.account === b.id && mentionsAny(r.text)).length;
    const keptBefore = (table: string) => before.filter((r) => r.table === table && r.account === b.id && mentionsAny(r.text)).length;
    for (const table of ['events', 'alerts', 'alert_notes', 'audit_log', 'webhook_deliveries']) expect(kept(table), table).toBe(keptBefore(table));

    // Kept rows carry the tombstone; the bystander's own event stays.
    const alert = (await call(t, a.secret, 'GET', `/v1/alerts/${alertA}`)).json();
    expect(alert.actor_id).toBe('[erased]');
    const bystander = (await call(t, a.secret, 'GET', `/v1/events?actor_id=${BYSTANDER}`)).json().data as Json[];
    expect(bystander).toHaveLength(1);
    expect((await call(t, a.secret, 'GET', `/v1/events?q=${encodeURIComponent(ACTOR)}`)).json().data).toEqual([]);
    expect((await call(t, b.secret, 'GET', `/v1/events?q=${encodeURIComponent(ACTOR)}`)).json().data.length).toBeGreaterThan(0);

    // Detection state: nothing of A's mentions the subject; B's still does.
    expect((await stateTexts(t, a.id)).filter(mentionsAny)).toEqual([]);
    expect((await stateTexts(t, b.id)).some(mentionsAny)).toBe(true);

    // The request's audit entry names the job and hints, never the identifiers.
    const audit = (await t.services.store.audit.list(a.id, { action: 'subject.erase_requested' }, 10)).items;
    expect(audit).toHaveLength(1);
    expect(audit[0]?.targetId).toBe(submitted.id);
    expect(mentionsAny(JSON.stringify(audit[0]))).toBe(false);

    // An export now finds nothing; erasing again is fine and finds nothing either.
    expect((await call(t, aSubjects, 'POST', '/v1/subjects/export', { identifiers: IDENTIFIERS })).body).toBe('');
    const again = await call(t, aSubjects, 'POST', '/v1/subjects/erase', { identifiers: IDENTIFIERS });
    expect(again.statusCode).toBe(202);
    const second = await finished(aSubjects, again.json().job.id);
    expect(second.counts).toMatchObject({ events: 0, alerts: 0, notes: 0, deliveries: 0 });
    const listed = (await call(t, aSubjects, 'GET', '/v1/subjects/jobs')).json().data as Json[];
    expect(listed.map((j) => j.id)).toEqual([again.json().job.id, submitted.id]);
  });
});

describe('data subjects: pseudonymised events', () => {
  const MASTER = 'a-master-secret-of-at-least-32-characters';
  let t: TestApp;
  afterAll(() => t?.close());

  it('erases and exports the events that hold only the pseudonym of an identifier', async () => {
    t = await roomyApp({ ...ENV, VIGIL_PSEUDONYM_SECRET: MASTER });
    const acct = await t.account('pro');
    const other = await t.account('pro');
    const { accountSecret, pseudonymOf } = await import('../../src/privacy/pseudonym.js');
    const pseudonym = pseudonymOf(accountSecret(MASTER, acct.id), 'email', EMAIL);
    const otherPseudonym = pseudonymOf(accountSecret(MASTER, other.id), 'email', EMAIL);
    expect((await postEvent(t, acct.secret, { event: 'auth.login.success', actor_id: pseudonym })).statusCode).toBe(202);
    expect((await postEvent(t, other.secret, { event: 'auth.login.success', actor_id: otherPseudonym })).statusCode).toBe(202);
    const key = (await call(t, acct.secret, 'POST', '/v1/keys', { name: 'privacy', scopes: ['subjects'] })).json().key as string;
    const identifiers = [{ kind: 'email', value: EMAIL }];
    const exported = (await call(t, key, 'POST', '/v1/subjects/export', { identifiers })).body.trim().split('\n');
    expect(exported.map((l) => JSON.parse(l).actor_id)).toEqual([pseudonym]);
    const id = (await call(t, key, 'POST', '/v1/subjects/erase', { identifiers })).json().job.id as string;
    await until(async () => (await call(t, key, 'GET', `/v1/subjects/jobs/${id}`)).json().job.status === 'done', 'erasure job done');
    expect((await call(t, acct.secret, 'GET', '/v1/events')).json().data).toEqual([]);
    expect((await call(t, other.secret, 'GET', '/v1/events')).json().data.map((e: Json) => e.actor_id)).toEqual([otherPseudonym]);
  });
});
