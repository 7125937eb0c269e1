import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_PER_EMAIL_PER_MINUTE } from '../../src/dashboard/sign-in.js';
import { base32Decode, hotp, totpStep } from '../../src/team/totp.js';
import { bearer, testApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, team, type Session } from './team-support.js';

const EMAIL = 'careful@example.com';

describe('two-step sign-in with an authenticator app (TOTP) and recovery codes', () => {
  let t: TestApp;
  let accountId: string;
  let secretKey: string;
  const people = team(() => t);
  let me: Session;
  let totpSecret = '';
  let recoveryCodes: string[] = [];
  const code = (offset = 0) => hotp(base32Decode(totpSecret) as Buffer, totpStep(t.clock.now()) + offset);
  /** A code that is none of the window's. */
  const wrongCode = () => {
    const window = new Set([code(-1), code(), code(1)]);
    let n = 0;
    while (window.has(String(n).padStart(6, '0'))) n++;
    return String(n).padStart(6, '0');
  };
  const nextMinute = () => t.clock.advance(61_000);
  const secondStep = (mfaToken: string, answer: object) =>
    t.vigil.app.inject({ method: 'POST', url: '/dashboard/api/sign-in/mfa', payload: { mfa_token: mfaToken, ...answer } });
  const firstStep = async (): Promise<string> => {
    const res = await people.signIn(EMAIL);
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.json()).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    return res.json().mfa_token as string;
  };

  beforeAll(async () => {
    t = await testApp({ VIGIL_IP_LIMITS: '127.0.0.0/8=100000000' });
    ({ id: accountId, secret: secretKey } = await t.account('pro'));
    await people.add(accountId, EMAIL, 'viewer');
    me = await people.session(EMAIL);
  });
  afterAll(() => t.close());

  it('enrols with a confirmed code and answers ten recovery codes once', async () => {
    const byKey = await t.vigil.app.inject({ method: 'POST', url: '/v1/me/totp', headers: bearer(secretKey) });
    expect(byKey.statusCode).toBe(403);
    const started = await me.call('POST', '/v1/me/totp');
    expect(started.statusCode).toBe(201);
    totpSecret = started.json().secret as string;
    expect(totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.json().otpauth_uri).toBe(`otpauth://totp/Vigil%3Acareful%40example.com?secret=${totpSecret}&issuer=Vigil&algorithm=SHA1&digits=6&period=30`);
    expect((await me.call('POST', '/v1/me/totp/confirm', { code: wrongCode() })).statusCode).toBe(400);
    const confirmed = await me.call('POST', '/v1/me/totp/confirm', { code: code() });
    expect(confirmed.statusCode).toBe(200);
    recoveryCodes = confirmed.json().recovery_codes as string[];
    expect(new Set(recoveryCodes).size).toBe(10);
    expect((await me.call('GET', '/v1/me')).json()).toMatchObject({ totp: true });
    expect((await me.call('POST', '/v1/me/totp')).statusCode).toBe(409);
    expect(await people.entries(accountId, 'totp.')).toMatchObject([{ action: 'totp.enabled', changes: { totp: { before: false, after: true } } }]);
  });

  it('asks for a code after the password, accepting each code and each sign-in step once', async () => {
    const mfaToken = await firstStep();
    const reused = await secondStep(mfaToken, { code: code() });
    expect([reused.statusCode, reused.json().message]).toEqual([401, 'Wrong code.']);
    t.clock.advance(30_000);
    const signedIn = await secondStep(mfaToken, { code: code() });
    const session = people.sessionOf(signedIn);
    const current = (await session.call('GET', '/v1/me/sessions')).json().sessions.find((s: { current: boolean }) => s.current);
    expect(current.method).toBe('password+totp');
    t.clock.advance(30_000);
    expect((await secondStep(mfaToken, { code: code() })).statusCode).toBe(401);
    expect((await people.entries(accountId, 'sign_in.failed')).map((e) => e.details.reason)).toEqual(['wrong_code']);
  });

  it('takes a recovery code instead, each one once', async () => {
    nextMinute();
    const [first, second] = recoveryCodes as [string, string];
    expect((await secondStep(await firstStep(), { recovery_code: first.toUpperCase() })).statusCode).toBe(201);
    const again = await secondStep(await firstStep(), { recovery_code: first });
    expect([again.statusCode, again.json().message]).toEqual([401, 'Wrong recovery code.']);
    nextMinute();
    const signedIn = people.sessionOf(await secondStep(await firstStep(), { recovery_code: second }));
    const current = (await signedIn.call('GET', '/v1/me/sessions')).json().sessions.find((s: { current: boolean }) => s.current);
    expect(current.method).toBe('password+recovery');
  });

  it('counts wrong codes in the email’s sign-in throttle', async () => {
    nextMinute();
    const mfaToken = await firstStep();
    const answers: number[] = [];
    for (let i = 1; i <= SIGN_IN_PER_EMAIL_PER_MINUTE; i++) answers.push((await secondStep(mfaToken, { code: wrongCode() })).statusCode);
    expect(answers).toEqual([...Array<number>(SIGN_IN_PER_EMAIL_PER_MINUTE - 1).fill(401), 429]);
  });

  it('replaces the recovery codes and turns two-step sign-in off with a current code', async () => {
    nextMinute();
    expect((await me.call('POST', '/v1/me/recovery-codes', { code: wrongCode() })).statusCode).toBe(401);
    const fresh = await me.call('POST', '/v1/me/recovery-codes', { code: code() });
    expect(fresh.statusCode).toBe(200);
    const renewed = fresh.json().recovery_codes as string[];
    expect(renewed).toHaveLength(10);
    expect(renewed.some((c) => recoveryCodes.includes(c))).toBe(false);
    expect((await secondStep(await firstStep(), { recovery_code: recoveryCodes[5] })).statusCode).toBe(401);

    nextMinute();
    expect((await me.call('DELETE', '/v1/me/totp', { password: 'not my password at all' })).statusCode).toBe(401);
    expect((await me.call('DELETE', '/v1/me/totp', { code: code() })).statusCode).toBe(204);
    expect((await people.signIn(EMAIL)).statusCode).toBe(201);
    expect((await people.entries(accountId, 'recovery_codes.regenerated')).length).toBe(1);
    expect((await people.entries(accountId, 'totp.disabled')).length).toBe(1);

    const audit = JSON.stringify(await people.entries(accountId));
    for (const secret of [totpSecret, PASSWORD, ...recoveryCodes, ...renewed]) expect(audit).not.toContain(secret);
  });
});
