import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail, CLI_OPERATOR } from '../../src/audit/trail.js';
import { Members } from '../../src/team/members.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { roomyApp, storeOpenAlert } from './support.js';

const PASSWORD = 'correct horse battery staple 7';
type Headers = Record<string, string>;
type AlertView = { id: string; status: string; assignee: { id: string; email: string | null; name: string | null } | null };

describe('alerts assigned to members, and who triaged them', () => {
  let t: TestApp;
  let accountId: string;
  let secret: string;
  let otherSecret: string;
  const ids: Record<string, string> = {};
  const sessions: Record<string, Headers> = {};

  beforeAll(async () => {
    t = await roomyApp();
    ({ id: accountId, secret } = await t.account('pro'));
    const other = await t.account('pro');
    otherSecret = other.secret;
    const members = new Members(t.services.store, new AuditTrail(t.services.store.audit, t.clock), t.clock);
    for (const [email, role, account] of [
      ['ana@example.com', 'analyst', accountId],
      ['bo@example.com', 'analyst', accountId],
      ['vi@example.com', 'viewer', accountId],
      ['elsewhere@example.com', 'admin', other.id],
    ] as const) {
      const added = await members.add(
        { accountId: account, actor: CLI_OPERATOR, ip: null, userAgent: null },
        { email, role, password: PASSWORD, name: email.split('@')[0] },
      );
      expect(added.ok).toBe(true);
      ids[email] = (await t.services.store.members.findUserByEmail(email))?.id ?? '';
      if (account === accountId) {
        const res = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/sign-in', payload: { email, password: PASSWORD } });
        expect(res.statusCode).toBe(201);
        sessions[email] = { cookie: String(res.headers['set-cookie']).split(';')[0] as string, 'x-csrf-token': res.json<{ csrf_token: string }>().csrf_token };
      }
    }
  });
  afterAll(() => t.close());

  const newAlert = (account = accountId): Promise<string> => storeOpenAlert(t, account);
  const patch = (who: Headers, id: string, payload: object) => t.vigil.app.inject({ method: 'PATCH', url: `/v1/alerts/${id}`, headers: who, payload });
  const list = async (who: Headers, query: string) => {
    const res = await t.vigil.app.inject({ method: 'GET', url: `/v1/alerts?${query}`, headers: who });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ data: AlertView[] }>().data.map((a) => a.id);
  };
  const entries = async (target: string, action: string) =>
    (await t.services.store.audit.list(accountId, { targetId: target, action }, 10)).items.map((e) => ({ actor: e.actor.label, changes: e.changes }));

  it('assigns an alert to a member of the account and shows who it is, recording before and after', async () => {
    const alert = await newAlert();
    const ana = sessions['ana@example.com'] as Headers;
    const res = await patch(ana, alert, { assignee: ids['bo@example.com'] as string });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<AlertView>()).toMatchObject({ id: alert, status: 'open', assignee: { id: ids['bo@example.com'], email: 'bo@example.com', name: 'bo' } });
    const shown = await t.vigil.app.inject({ method: 'GET', url: `/v1/alerts/${alert}`, headers: bearer(secret) });
    expect(shown.json<AlertView>().assignee?.email).toBe('bo@example.com');

    const unassigned = await patch(bearer(secret), alert, { assignee: null, status: 'acknowledged' });
    expect(unassigned.json<AlertView>()).toMatchObject({ status: 'acknowledged', assignee: null });
    expect(await entries(alert, 'alert.assigned')).toEqual([
      { actor: expect.stringMatching(/^vgl_sk_/) as string, changes: { assignee: { before: ids['bo@example.com'], after: null } } },
      { actor: 'ana@example.com', changes: { assignee: { before: null, after: ids['bo@example.com'] } } },
    ]);
    expect(await entries(alert, 'alert.status_changed')).toHaveLength(1);
  });

  it('refuses an assignee who is not a member of the account, changing nothing, and a viewer assigning', async () => {
    const alert = await newAlert();
    for (const assignee of [ids['elsewhere@example.com'] as string, 'bob', 'usr_00000000000000000000000000', 7]) {
      const res = await patch(bearer(secret), alert, { status: 'resolved', assignee });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ error: string }>().error).toBe('INVALID_REQUEST');
      if (typeof assignee === 'string')
        expect(res.json<{ message: string }>().message).toMatch(/assignee must be the id \(usr_…\) of a member of this account, or null/);
    }
    const viewer = await patch(sessions['vi@example.com'] as Headers, alert, { assignee: ids['vi@example.com'] as string });
    expect(viewer.statusCode).toBe(403);
    const after = await t.vigil.app.inject({ method: 'GET', url: `/v1/alerts/${alert}`, headers: bearer(secret) });
    expect(after.json()).toMatchObject({ status: 'open', assignee: null });
    expect(await t.services.store.audit.list(accountId, { targetId: alert }, 10)).toMatchObject({ items: [] });
    expect((await patch(bearer(secret), alert, {})).statusCode).toBe(400);
  });

  it('lists my alerts, unassigned ones or a member’s; "me" needs a signed-in member', async () => {
    const mine = await newAlert();
    const theirs = await newAlert();
    const nobody = await newAlert();
    const ana = sessions['ana@example.com'] as Headers;
    expect((await patch(ana, mine, { assignee: ids['ana@example.com'] as string })).statusCode).toBe(200);
    expect((await patch(ana, theirs, { assignee: ids['bo@example.com'] as string })).statusCode).toBe(200);
    expect(await list(ana, 'assignee=me')).toContain(mine);
    expect(await list(ana, 'assignee=me')).not.toContain(theirs);
    expect(await list(sessions['bo@example.com'] as Headers, 'assignee=me')).toEqual(expect.arrayContaining([theirs]));
    expect(await list(bearer(secret), `assignee=${ids['bo@example.com']}`)).not.toContain(mine);
    const open = await list(bearer(secret), 'assignee=unassigned&limit=500');
    expect(open).toContain(nobody);
    expect(open).not.toContain(mine);
    expect(await list(bearer(otherSecret), `assignee=${ids['bo@example.com']}`)).toEqual([]);

    const byKey = await t.vigil.app.inject({ method: 'GET', url: '/v1/alerts?assignee=me', headers: bearer(secret) });
    expect(byKey.statusCode).toBe(400);
    expect(byKey.json<{ message: string }>().message).toMatch(/assignee=me needs a person signed in/);
    expect((await t.vigil.app.inject({ method: 'GET', url: '/v1/alerts?assignee=somebody', headers: bearer(secret) })).statusCode).toBe(400);
  });

  it('shows who wrote each note and who changed the status or the assignee', async () => {
    const alert = await newAlert();
    const ana = sessions['ana@example.com'] as Headers;
    expect((await patch(ana, alert, { status: 'acknowledged', assignee: ids['ana@example.com'] as string })).statusCode).toBe(200);
    const note = await t.vigil.app.inject({
      method: 'POST',
      url: `/dashboard/api/alerts/${alert}/notes`,
      headers: ana,
      payload: { status: 'acknowledged', note: 'mine' },
    });
    expect(note.statusCode).toBe(201);
    expect(note.json()).toMatchObject({ note: 'mine', author: { kind: 'member', id: ids['ana@example.com'], label: 'ana@example.com' } });
    expect((await patch(bearer(secret), alert, { status: 'resolved' })).statusCode).toBe(200);
    await t.vigil.app.inject({
      method: 'POST',
      url: `/dashboard/api/alerts/${alert}/notes`,
      headers: bearer(secret),
      payload: { status: 'resolved', note: 'closed' },
    });

    const res = await t.vigil.app.inject({ method: 'GET', url: `/dashboard/api/alerts/${alert}/notes`, headers: sessions['vi@example.com'] as Headers });
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      data: { note: string; author: { kind: string; label: string } }[];
      history: { action: string; author: { kind: string; label: string }; changes: object }[];
    }>();
    expect(body.data.map((n) => [n.note, n.author.kind])).toEqual([
      ['mine', 'member'],
      ['closed', 'key'],
    ]);
    expect(body.history.map((h) => [h.action, h.author.kind, h.changes])).toEqual([
      ['alert.status_changed', 'member', { status: { before: 'open', after: 'acknowledged' } }],
      ['alert.assigned', 'member', { assignee: { before: null, after: ids['ana@example.com'] } }],
      ['alert.status_changed', 'key', { status: { before: 'acknowledged', after: 'resolved' } }],
    ]);
  });
});
