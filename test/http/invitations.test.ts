import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, testApp, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { PASSWORD, team, type Session } from './team-support.js';

const NEWCOMER_PASSWORD = 'a fresh start for the newcomer';
const tokenOf = (link: string): string => link.split('/').pop() as string;

describe('invitations by single-use link, without mail', () => {
  let t: TestApp;
  let accountId: string;
  let otherAccount: string;
  const people = team(() => t);
  let admin: Session;
  let owner: Session;

  beforeAll(async () => {
    t = await testApp({ VIGIL_IP_LIMITS: '127.0.0.0/8=100000000' });
    accountId = (await t.account('pro')).id;
    otherAccount = (await t.account('pro')).id;
    await people.add(accountId, 'owner@example.com', 'owner');
    await people.add(accountId, 'admin@example.com', 'admin');
    await people.add(otherAccount, 'elsewhere@example.com', 'owner');
    [owner, admin] = [await people.session('owner@example.com'), await people.session('admin@example.com')];
  });
  afterAll(() => t.close());

  const describeLink = (token: string) => t.vigil.app.inject({ method: 'GET', url: `/dashboard/api/invitations/${token}` });
  const accept = (token: string, payload: object) => t.vigil.app.inject({ method: 'POST', url: `/dashboard/api/invitations/${token}/accept`, payload });

  it('hands back a relative link when no public address is set, and a new person joins with it once', async () => {
    const made = await admin.call('POST', '/v1/invitations', { email: 'Newcomer@Example.com', role: 'analyst' });
    expect(made.statusCode).toBe(201);
    const body = made.json();
    expect(body).toMatchObject({ email: 'newcomer@example.com', role: 'analyst', emailed: false, created_by: 'admin@example.com' });
    expect(body.link).toMatch(/^\/dashboard#\/accept\/[\w-]{40,}$/);
    expect(Date.parse(body.expires_at) - t.clock.now()).toBe(72 * 3600 * 1000);
    expect((await admin.call('GET', '/v1/members')).json().invitations).toEqual([
      { id: body.id, email: 'newcomer@example.com', role: 'analyst', expires_at: body.expires_at, created_by: 'admin@example.com' },
    ]);

    const token = tokenOf(body.link);
    expect((await describeLink(token)).json()).toMatchObject({
      email: 'newcomer@example.com',
      role: 'analyst',
      account: { name: 'acct-pro' },
      existing_person: false,
    });
    expect((await accept(token, { password: 'password123' })).statusCode).toBe(400);
    const joined = await accept(token, { name: 'New Comer', password: NEWCOMER_PASSWORD });
    const session = people.sessionOf(joined);
    expect(joined.json()).toMatchObject({ member: { email: 'newcomer@example.com', name: 'New Comer', role: 'analyst' }, account: { id: accountId } });
    expect((await session.call('GET', '/v1/me')).json()).toMatchObject({ role: 'analyst' });
    expect((await accept(token, { password: NEWCOMER_PASSWORD })).statusCode).toBe(404);
    expect((await describeLink(token)).statusCode).toBe(404);

    const entries = await people.entries(accountId, 'invitation.accepted');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: { kind: 'member', label: 'newcomer@example.com' }, changes: { role: { before: null, after: 'analyst' } } });
    expect((await people.entries(accountId, 'member.invited')).map((e) => e.details)).toEqual([{ email: 'newcomer@example.com', emailed: false }]);
  });

  it('lets only an owner invite an owner, and refuses a present member', async () => {
    const byAdmin = await admin.call('POST', '/v1/invitations', { email: 'boss@example.com', role: 'owner' });
    expect([byAdmin.statusCode, byAdmin.json().error]).toEqual([403, 'FORBIDDEN']);
    expect((await owner.call('POST', '/v1/invitations', { email: 'boss@example.com', role: 'owner' })).statusCode).toBe(201);
    const again = await admin.call('POST', '/v1/invitations', { email: 'admin@example.com', role: 'viewer' });
    expect([again.statusCode, again.json().error]).toEqual([409, 'CONFLICT']);
  });

  it('asks someone who already has a password for it, and adds them to one more account', async () => {
    const made = await t.vigil.app.inject({
      method: 'POST',
      url: `/admin/accounts/${accountId}/invitations`,
      headers: bearer(ADMIN_TOKEN),
      payload: { email: 'elsewhere@example.com', role: 'viewer' },
    });
    expect(made.json()).toMatchObject({ emailed: false, created_by: 'admin-api', link: expect.stringMatching(/^\/dashboard#\/accept\//) });
    const token = tokenOf(made.json().link);
    expect((await describeLink(token)).json()).toMatchObject({ existing_person: true });
    const wrong = await accept(token, { password: 'not the right one at all' });
    expect(wrong.statusCode).toBe(401);
    const joined = await accept(token, { password: PASSWORD });
    expect(joined.json()).toMatchObject({
      account: { id: accountId },
      role: 'viewer',
      accounts: expect.arrayContaining([expect.objectContaining({ id: otherAccount })]),
    });
  });

  it('stops a link that is withdrawn or older than 72 hours', async () => {
    const withdrawn = (await admin.call('POST', '/v1/invitations', { email: 'late@example.com', role: 'viewer' })).json();
    expect((await admin.call('DELETE', `/v1/invitations/${withdrawn.id}`)).statusCode).toBe(204);
    expect((await admin.call('DELETE', `/v1/invitations/${withdrawn.id}`)).statusCode).toBe(404);
    expect((await accept(tokenOf(withdrawn.link), { password: NEWCOMER_PASSWORD })).statusCode).toBe(404);
    expect((await people.entries(accountId, 'invitation.revoked')).map((e) => e.targetId)).toEqual([withdrawn.id]);

    const expiring = (await admin.call('POST', '/v1/invitations', { email: 'slow@example.com', role: 'viewer' })).json();
    t.clock.advance(72 * 3600 * 1000 + 1);
    expect((await describeLink(tokenOf(expiring.link))).statusCode).toBe(404);
    const later = await people.session('admin@example.com');
    expect((await later.call('GET', '/v1/members')).json().invitations).toEqual([]);
  });
});

interface Mail {
  readonly to: string[];
  readonly text: string;
}

/** An SMTP server that wants this login, keeping what it receives (quoted-printable undone). */
async function mailServer(user: string, pass: string): Promise<{ server: SMTPServer; port: number; mails: Mail[] }> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onRcptTo: (address, _session, done) => (address.address === 'bounce@example.com' ? done(new Error('no such mailbox')) : done()),
    onAuth: (auth, _session, done) => (auth.username === user && auth.password === pass ? done(null, { user }) : done(new Error('bad login'))),
    onData: (stream, session, done) => {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        const text = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.server.address() as AddressInfo).port, mails };
}

describe('invitations and password resets by mail (VIGIL_SMTP_URL)', () => {
  const SMTP_PASSWORD = 'smtp-pass-Zq8x1';
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof mailServer>>;
  let accountId: string;
  const lines: string[] = [];
  const people = team(() => t);
  let admin: Session;

  beforeAll(async () => {
    smtp = await mailServer('vigil', SMTP_PASSWORD);
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    t = await testApp(
      {
        VIGIL_IP_LIMITS: '127.0.0.0/8=100000000',
        VIGIL_PUBLIC_URL: 'https://vigil.example.com',
        VIGIL_SMTP_URL: `smtp://vigil:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`,
        VIGIL_SMTP_FROM: 'Vigil <vigil@example.com>',
      },
      { logger },
    );
    accountId = (await t.account('pro')).id;
    await people.add(accountId, 'admin@example.com', 'admin');
    admin = await people.session('admin@example.com');
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  it('mails the invitation link instead of returning it', async () => {
    const made = await admin.call('POST', '/v1/invitations', { email: 'mailed@example.com', role: 'viewer' });
    expect(made.statusCode).toBe(201);
    expect(made.json()).toMatchObject({ email: 'mailed@example.com', emailed: true });
    expect(made.json()).not.toHaveProperty('link');
    const mail = smtp.mails.find((m) => m.to.includes('mailed@example.com'));
    expect(mail?.text).toMatch(/https:\/\/vigil\.example\.com\/dashboard#\/accept\/[\w-]{40,}/);
    const link = /https:\/\/vigil\.example\.com\/dashboard#\/accept\/([\w-]+)/.exec(mail?.text ?? '')?.[1] as string;
    const joined = await t.vigil.app.inject({ method: 'POST', url: `/dashboard/api/invitations/${link}/accept`, payload: { password: NEWCOMER_PASSWORD } });
    expect(joined.statusCode).toBe(201);
  });

  it('sends no invitation when the mail is refused, and says so without the SMTP credentials', async () => {
    const refused = await admin.call('POST', '/v1/invitations', { email: 'bounce@example.com', role: 'viewer' });
    expect([refused.statusCode, refused.json().error]).toEqual([503, 'UNAVAILABLE']);
    expect(refused.body).not.toContain(SMTP_PASSWORD);
    expect((await admin.call('GET', '/v1/members')).json().invitations).toEqual([]);
    expect((await people.entries(accountId, 'member.invited')).map((e) => e.details.email)).toEqual(['mailed@example.com']);
  });

  it('mails a reset link to a known email only, and it sets the password', async () => {
    // Someone who signs in only through single sign-on gets no link: it would give them a password.
    const now = t.clock.now();
    const sso = { id: 'usr_ssoonly', email: 'sso@example.com', name: 'sso', passwordHash: null, totpSecret: null, totpEnabledAt: null, totpLastStep: null };
    await t.services.store.members.createUser({ ...sso, recoveryHashes: [], createdAt: now, passwordChangedAt: null, lastSignInAt: null });
    await t.services.store.members.addMember({ accountId, userId: sso.id, role: 'viewer', createdAt: now, createdBy: null });
    for (const email of ['sso@example.com', 'admin@example.com', 'stranger@example.com']) {
      const res = await t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/password-reset', payload: { email } });
      expect(res.statusCode).toBe(202);
    }
    await until(() => smtp.mails.some((m) => m.to.includes('admin@example.com')), 'the reset mail');
    expect(smtp.mails.some((m) => m.to.includes('stranger@example.com') || m.to.includes('sso@example.com'))).toBe(false);
    expect((await people.entries(accountId, 'password.reset_requested')).find((e) => e.targetId === sso.id)?.details).toEqual({
      emailed: false,
      single_sign_on_only: true,
    });
    const token = /dashboard#\/reset\/([\w-]+)/.exec(smtp.mails.find((m) => m.to.includes('admin@example.com'))?.text ?? '')?.[1] as string;
    const reset = await t.vigil.app.inject({ method: 'POST', url: `/dashboard/api/password-reset/${token}`, payload: { password: NEWCOMER_PASSWORD } });
    expect(reset.statusCode).toBe(204);
    expect((await people.signIn('admin@example.com', NEWCOMER_PASSWORD)).statusCode).toBe(201);
  });

  it('keeps the SMTP password, the links and the people’s passwords out of the logs and the audit trail', async () => {
    const tokens = smtp.mails.flatMap((m) => [...(/#\/(?:accept|reset)\/([\w-]+)/g.exec(m.text) ?? [])].slice(1));
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    const audit = JSON.stringify(await people.entries(accountId));
    for (const text of [lines.join('\n'), audit]) {
      for (const secret of [SMTP_PASSWORD, PASSWORD, NEWCOMER_PASSWORD, ...tokens]) expect(text).not.toContain(secret);
    }
    expect(lines.join('\n')).toContain('/dashboard/api/invitations/[token]/accept');
  });
});
