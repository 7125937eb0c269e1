import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, testApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, team, type Session } from './team-support.js';

const NEW_PASSWORD = 'a brand new passphrase 42';

describe('an account’s people: members, roles, sessions, own password, reset links', () => {
  let t: TestApp;
  let accountId: string;
  let secret: string;
  const people = team(() => t);
  const ids: Record<string, string> = {};
  let owner: Session;
  let admin: Session;

  beforeAll(async () => {
    t = await testApp({ VIGIL_IP_LIMITS: '127.0.0.0/8=100000000', VIGIL_PUBLIC_URL: 'https://vigil.example.com/' });
    ({ id: accountId, secret } = await t.account('pro'));
    for (const [name, role] of [
      ['owner', 'owner'],
      ['admin', 'admin'],
      ['analyst', 'analyst'],
      ['leaver', 'viewer'],
      ['forgetful', 'viewer'],
    ] as const)
      ids[name] = await people.add(accountId, `${name}@example.com`, role);
    owner = await people.session('owner@example.com');
    admin = await people.session('admin@example.com');
  });
  afterAll(() => t.close());

  it('lists members to admins only, never to keys', async () => {
    const list = await admin.call('GET', '/v1/members');
    expect(list.statusCode).toBe(200);
    expect(list.json().members).toContainEqual({
      id: ids.analyst,
      email: 'analyst@example.com',
      name: 'analyst',
      role: 'analyst',
      totp: false,
      sso: false,
      created_at: expect.any(String),
      last_sign_in_at: null,
    });
    expect(list.json().invitations).toEqual([]);
    const byKey = await t.vigil.app.inject({ method: 'GET', url: '/v1/members', headers: bearer(secret) });
    expect([byKey.statusCode, byKey.json().message]).toEqual([403, 'Only a person signed in to the dashboard can do this; API keys cannot.']);
    const analyst = await people.session('analyst@example.com');
    expect((await analyst.call('GET', '/v1/members')).statusCode).toBe(403);
    expect((await analyst.call('GET', '/v1/me')).json()).toMatchObject({ id: ids.analyst, role: 'analyst', account: { id: accountId } });
  });

  it('lets only owners grant or take the owner role, and never takes it from the last owner', async () => {
    const grant = await admin.call('PATCH', `/v1/members/${ids.analyst}`, { role: 'owner' });
    expect([grant.statusCode, grant.json().error]).toEqual([403, 'FORBIDDEN']);
    const last = await owner.call('PATCH', `/v1/members/${ids.owner}`, { role: 'admin' });
    expect([last.statusCode, last.json().error]).toEqual([409, 'CONFLICT']);
    expect((await owner.call('DELETE', `/v1/members/${ids.owner}`)).statusCode).toBe(409);

    const before = (await people.entries(accountId, 'member.role_changed')).length;
    const promoted = await admin.call('PATCH', `/v1/members/${ids.analyst}`, { role: 'admin' });
    expect(promoted.json()).toMatchObject({ id: ids.analyst, role: 'admin' });
    const entries = (await people.entries(accountId, 'member.role_changed')).slice(before);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: { kind: 'member', id: ids.admin, label: 'admin@example.com' },
      targetId: ids.analyst,
      changes: { role: { before: 'analyst', after: 'admin' } },
    });
    const unknown = await admin.call('PATCH', `/v1/members/${ids.analyst}`, { role: 'superuser' });
    expect(unknown.statusCode).toBe(400);
  });

  it('removes a member and ends their sessions in the account at once', async () => {
    const leaver = await people.session('leaver@example.com');
    expect((await leaver.call('GET', '/v1/me')).statusCode).toBe(200);
    const sessions = await admin.call('GET', `/v1/members/${ids.leaver}/sessions`);
    expect(sessions.json().sessions).toHaveLength(1);
    expect((await admin.call('DELETE', `/v1/members/${ids.leaver}`)).statusCode).toBe(204);
    expect((await leaver.call('GET', '/v1/me')).statusCode).toBe(401);
    expect((await admin.call('DELETE', `/v1/members/${ids.leaver}`)).statusCode).toBe(404);
    const [entry, ...more] = await people.entries(accountId, 'member.removed');
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ targetId: ids.leaver, changes: { role: { before: 'viewer', after: null } }, details: { sessions_revoked: 1 } });
  });

  it('shows a person their sessions, the current one flagged, and lets them or an admin end one', async () => {
    const first = await people.session('forgetful@example.com');
    const second = await people.session('forgetful@example.com');
    const mine = await second.call('GET', '/v1/me/sessions');
    const list = mine.json().sessions as { id: string; current: boolean; method: string }[];
    expect(list).toHaveLength(2);
    expect(list.filter((s) => s.current)).toHaveLength(1);
    const other = list.find((s) => !s.current) as { id: string };
    expect((await second.call('DELETE', `/v1/me/sessions/${other.id}`)).statusCode).toBe(204);
    expect((await first.call('GET', '/v1/me')).statusCode).toBe(401);

    const current = list.find((s) => s.current) as { id: string };
    expect((await admin.call('DELETE', `/v1/members/${ids.forgetful}/sessions/${current.id}`)).statusCode).toBe(204);
    expect((await second.call('GET', '/v1/me')).statusCode).toBe(401);
    expect((await people.entries(accountId, 'session.revoked')).map((e) => e.targetId)).toEqual([other.id, current.id]);
  });

  it('changes a person’s own password with the current one, ending their other sessions', async () => {
    // The analyst's session from the first test ends too.
    const elsewhere = await people.session('analyst@example.com');
    const here = await people.session('analyst@example.com');
    const wrong = await here.call('POST', '/v1/me/password', { current_password: 'not my password', new_password: NEW_PASSWORD });
    expect(wrong.statusCode).toBe(401);
    const weak = await here.call('POST', '/v1/me/password', { current_password: PASSWORD, new_password: 'password123' });
    expect([weak.statusCode, weak.json().message]).toEqual([400, expect.stringMatching(/breach/)]);
    expect((await here.call('POST', '/v1/me/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).statusCode).toBe(204);
    expect((await here.call('GET', '/v1/me')).statusCode).toBe(200);
    expect((await elsewhere.call('GET', '/v1/me')).statusCode).toBe(401);
    expect((await people.signIn('analyst@example.com')).statusCode).toBe(401);
    expect((await people.signIn('analyst@example.com', NEW_PASSWORD)).statusCode).toBe(201);
    expect((await people.entries(accountId, 'password.changed')).map((e) => e.details)).toEqual([{ via: 'self', sessions_revoked: 2 }]);
  });

  it('answers a reset request alike for anyone, and the operator’s link sets a new password once, ending every session', async () => {
    const ask = (email: string) => t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/password-reset', payload: { email } });
    const [known, unknown] = [await ask('forgetful@example.com'), await ask('nobody@example.com')];
    expect([known.statusCode, unknown.statusCode]).toEqual([202, 202]);
    expect(known.body).toBe(unknown.body);
    expect((await people.entries(accountId, 'password.reset_requested')).map((e) => e.details)).toEqual([{ emailed: false }]);

    const session = await people.session('forgetful@example.com');
    const made = await t.vigil.app.inject({
      method: 'POST',
      url: '/admin/users/reset-link',
      headers: bearer(ADMIN_TOKEN),
      payload: { email: 'Forgetful@example.com' },
    });
    expect(made.statusCode).toBe(201);
    const link = made.json().link as string;
    expect(link).toMatch(/^https:\/\/vigil\.example\.com\/dashboard#\/reset\/[\w-]{40,}$/);
    const token = link.split('/').pop() as string;
    const reset = (password: string) => t.vigil.app.inject({ method: 'POST', url: `/dashboard/api/password-reset/${token}`, payload: { password } });
    expect((await reset('short')).statusCode).toBe(400);
    expect((await reset(NEW_PASSWORD)).statusCode).toBe(204);
    expect((await reset(NEW_PASSWORD + '!')).statusCode).toBe(404);
    expect((await session.call('GET', '/v1/me')).statusCode).toBe(401);
    expect((await people.signIn('forgetful@example.com', NEW_PASSWORD)).statusCode).toBe(201);
    const entries = await people.entries(accountId, 'password.');
    expect(entries.map((e) => [e.action, e.actor.label])).toEqual([
      ['password.changed', 'analyst@example.com'],
      ['password.reset_requested', 'forgetful@example.com'],
      ['password.reset_requested', 'admin-api'],
      ['password.changed', 'forgetful@example.com'],
    ]);

    const expired = await t.vigil.app.inject({
      method: 'POST',
      url: '/admin/users/reset-link',
      headers: bearer(ADMIN_TOKEN),
      payload: { email: 'owner@example.com' },
    });
    t.clock.advance(60 * 60 * 1000 + 1);
    const late = await t.vigil.app.inject({
      method: 'POST',
      url: `/dashboard/api/password-reset/${String(expired.json().link).split('/').pop() ?? ''}`,
      payload: { password: NEW_PASSWORD },
    });
    expect(late.statusCode).toBe(404);
  });

  it('keeps every password out of the audit trail', async () => {
    const text = JSON.stringify(await people.entries(accountId));
    for (const secretText of [PASSWORD, NEW_PASSWORD, 'not my password']) expect(text).not.toContain(secretText);
    expect(text).not.toMatch(/reset\/[\w-]{20}/);
  });
});
