import { randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail, CLI_OPERATOR } from '../../src/audit/trail.js';
import { SIGN_IN_PER_ACCOUNT_PER_MINUTE, SIGN_IN_PER_EMAIL_PER_MINUTE } from '../../src/dashboard/sign-in.js';
import { Members } from '../../src/team/members.js';
import { testApp, type TestApp } from '../helpers/app.js';

const PASSWORD = 'correct horse battery staple 7';

describe('people sign in as themselves, with a role the guards enforce', () => {
  let t: TestApp;
  let accountId: string;
  let secret: string;
  let otherAccount: string;
  const members = () => new Members(t.services.store, new AuditTrail(t.services.store.audit, t.clock), t.clock);
  const cli = (account: string) => ({ accountId: account, actor: CLI_OPERATOR, ip: null, userAgent: null });

  beforeAll(async () => {
    t = await testApp({ VIGIL_IP_LIMITS: '127.0.0.0/8=100000000' });
    ({ id: accountId, secret } = await t.account('pro'));
    otherAccount = (await t.account('pro')).id;
    for (const [email, role] of [
      ['owner@example.com', 'owner'],
      ['viewer@example.com', 'viewer'],
      ['analyst@example.com', 'analyst'],
      ['admin@example.com', 'admin'],
      ['target@example.com', 'viewer'],
    ] as const) {
      const added = await members().add(cli(accountId), { email, role, password: PASSWORD });
      expect(added.ok).toBe(true);
    }
  });
  afterAll(() => t.close());

  const signIn = (email: string, password = PASSWORD, ip = '127.0.0.1') =>
    t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/sign-in', payload: { email, password }, remoteAddress: ip });

  async function session(email: string): Promise<{ cookie: string; csrf: string }> {
    const res = await signIn(email);
    expect(res.statusCode).toBe(201);
    const cookie = String(res.headers['set-cookie']).split(';')[0] as string;
    return { cookie, csrf: res.json<{ csrf_token: string }>().csrf_token };
  }

  it('refuses a weak or breached password and an unknown role when adding a person', async () => {
    const breached = await members().add(cli(accountId), { email: 'new@example.com', role: 'viewer', password: 'password123' });
    expect(breached).toMatchObject({ ok: false, message: expect.stringMatching(/breach/) });
    const short = await members().add(cli(accountId), { email: 'new@example.com', role: 'viewer', password: 'short' });
    expect(short).toMatchObject({ ok: false, message: expect.stringMatching(/at least 10/) });
    const role = await members().add(cli(accountId), { email: 'new@example.com', role: 'superuser', password: PASSWORD });
    expect(role).toMatchObject({ ok: false, message: expect.stringMatching(/Unknown role/) });
  });

  it('answers a wrong password and an unknown email alike, and records both failures without the password', async () => {
    const wrong = await signIn('viewer@example.com', 'not the password at all', '127.0.0.2');
    const unknown = await signIn('nobody@example.com', 'not the password at all', '127.0.0.2');
    expect([wrong.statusCode, unknown.statusCode]).toEqual([401, 401]);
    expect(wrong.json().message).toBe('Wrong email or password.');
    expect(unknown.json().message).toBe('Wrong email or password.');
    const entries = await t.services.store.audit.list(accountId, { action: 'sign_in.failed' }, 10);
    expect(entries.items.map((e) => [e.actor.label, e.details.reason])).toEqual([['viewer@example.com', 'wrong_password']]);
    expect(JSON.stringify(entries.items)).not.toContain('not the password');
    const instance = await t.services.store.audit.list('', { action: 'sign_in.failed' }, 10);
    expect(instance.items.some((e) => e.actor.label === 'nobody@example.com' && e.details.reason === 'unknown_email')).toBe(true);
  });

  it('opens a session whose role limits what the person may call', async () => {
    const viewer = await session('viewer@example.com');
    const me = await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: viewer.cookie } });
    expect(me.json()).toMatchObject({ member: { email: 'viewer@example.com', role: 'viewer' }, role: 'viewer', account: { id: accountId } });
    const read = await t.vigil.app.inject({ method: 'GET', url: '/v1/events', headers: { cookie: viewer.cookie } });
    expect(read.statusCode).toBe(200);
    const triage = await t.vigil.app.inject({
      method: 'PATCH',
      url: '/v1/alerts/alr_none',
      headers: { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf },
      payload: { status: 'resolved' },
    });
    expect(triage.statusCode).toBe(403);
    expect(triage.json().message).toBe('Your role (viewer) cannot do this; it needs analyst or above.');
    const send = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf },
      payload: { type: 'auth.login.failed', actor_id: 'a' },
    });
    expect(send.statusCode).toBe(403);

    const analyst = await session('analyst@example.com');
    const allowlist = await t.vigil.app.inject({
      method: 'PATCH',
      url: '/v1/alerts/alr_none',
      headers: { cookie: analyst.cookie, 'x-csrf-token': analyst.csrf },
      payload: { status: 'resolved' },
    });
    expect(allowlist.statusCode).toBe(404);
    const webhook = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { cookie: analyst.cookie, 'x-csrf-token': analyst.csrf },
      payload: { url: 'https://hooks.example.com/x' },
    });
    expect(webhook.statusCode).toBe(403);
    expect(webhook.json().message).toBe('Your role (analyst) cannot do this; it needs admin or above.');

    const admin = await session('admin@example.com');
    const models = await t.vigil.app.inject({ method: 'GET', url: '/v1/threat-models', headers: { cookie: admin.cookie } });
    expect(models.statusCode).toBe(200);
  });

  it('refuses a session at once when it is signed out or the person is removed', async () => {
    const viewer = await session('viewer@example.com');
    const out = await t.vigil.app.inject({ method: 'DELETE', url: '/dashboard/api/session', headers: { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf } });
    expect(out.statusCode).toBe(204);
    expect((await t.vigil.app.inject({ method: 'GET', url: '/v1/events', headers: { cookie: viewer.cookie } })).statusCode).toBe(401);
    // The page asks whether it is signed in on every load: signed out answers "no session", not an error.
    const asked = await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: viewer.cookie } });
    expect(asked.statusCode).toBe(204);
    expect(asked.body).toBe('');
    expect((await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/session' })).statusCode).toBe(204);

    const analyst = await session('analyst@example.com');
    const user = await t.services.store.members.findUserByEmail('analyst@example.com');
    expect(await t.services.store.members.removeMember(accountId, user?.id ?? '', t.clock.now())).toBe(true);
    expect((await t.vigil.app.inject({ method: 'GET', url: '/v1/events', headers: { cookie: analyst.cookie } })).statusCode).toBe(401);
  });

  it('never opens a session in an account the person is not a member of', async () => {
    const res = await t.vigil.app.inject({
      method: 'POST',
      url: '/dashboard/api/sign-in',
      payload: { email: 'owner@example.com', password: PASSWORD, account_id: otherAccount },
    });
    expect(res.statusCode).toBe(401);
  });

  it('throttles guesses at one email from any address', async () => {
    const answers: number[] = [];
    for (let i = 0; i <= SIGN_IN_PER_EMAIL_PER_MINUTE; i++)
      answers.push((await signIn('target@example.com', 'wrong guess number ' + i, `127.0.1.${i}`)).statusCode);
    expect(answers.slice(0, SIGN_IN_PER_EMAIL_PER_MINUTE).every((s) => s === 401)).toBe(true);
    expect(answers[SIGN_IN_PER_EMAIL_PER_MINUTE]).toBe(429);
  });

  it("throttles a password sprayed over one account's people from many addresses, and only that account", async () => {
    const sprayed = (await t.account('pro')).id;
    const guessesPerPerson = SIGN_IN_PER_EMAIL_PER_MINUTE - 1;
    const people = Math.ceil((SIGN_IN_PER_ACCOUNT_PER_MINUTE + 1) / guessesPerPerson);
    // A hash with the cheapest scrypt parameters (they travel with the hash): the spray is what is measured, not scrypt.
    const salt = randomBytes(16);
    const hash = ['scrypt', 2, 1, 1, salt.toString('base64url'), scryptSync(PASSWORD, salt, 32, { N: 2, r: 1, p: 1 }).toString('base64url')].join('$');
    for (let i = 0; i < people; i++) {
      const id = `usr_spray${i}`;
      await t.services.store.members.createUser({
        id,
        email: `spray${i}@example.com`,
        name: `spray${i}`,
        passwordHash: hash,
        totpSecret: null,
        totpEnabledAt: null,
        totpLastStep: null,
        recoveryHashes: [],
        createdAt: t.clock.now(),
        passwordChangedAt: null,
        lastSignInAt: null,
      });
      await t.services.store.members.addMember({ accountId: sprayed, userId: id, role: 'viewer', createdAt: t.clock.now(), createdBy: null });
    }
    const answers: number[] = [];
    for (let g = 0; g < guessesPerPerson; g++)
      for (let i = 0; i < people; i++) answers.push((await signIn(`spray${i}@example.com`, `Summer2026! ${g}`, `10.9.${g}.${i}`)).statusCode);
    expect(answers.slice(0, SIGN_IN_PER_ACCOUNT_PER_MINUTE).every((s) => s === 401)).toBe(true);
    expect(new Set(answers.slice(SIGN_IN_PER_ACCOUNT_PER_MINUTE))).toEqual(new Set([429]));
    // The right password of one of them waits too; another account's people sign in.
    expect((await signIn('spray0@example.com', PASSWORD, '10.9.99.1')).statusCode).toBe(429);
    expect((await signIn('admin@example.com', PASSWORD, '10.9.99.2')).statusCode).toBe(201);
    const throttled = await t.services.store.audit.list(sprayed, { action: 'sign_in.throttled' }, 100);
    expect(throttled.items.length).toBeGreaterThan(0);
    expect(throttled.items.every((e) => e.details.by === 'account')).toBe(true);
  });

  it('keeps key sign-in off unless the operator turns it on', async () => {
    const res = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/session', payload: { key: secret } });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/VIGIL_DASHBOARD_KEY_SIGN_IN=on/);
    const options = await t.vigil.app.inject({ method: 'GET', url: '/dashboard/api/sign-in' });
    expect(options.json()).toEqual({ password: true, key_sign_in: false, sso: false });
  });
});
