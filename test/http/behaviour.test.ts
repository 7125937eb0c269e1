/**
 * Behavioural decisions over HTTP, in both modes (embedded, and PostgreSQL + Redis in the
 * scale-out project): the action follows the alerts on the event that raises them and on the
 * actor's next events, and stays within the account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, testApp, type TestApp } from '../helpers/app.js';

interface Answer {
  risk: { score: number; action: string; breakdown: { source: string; points: number }[] };
  alerts: { id: string; type: string }[];
}

describe('behavioural decisions over HTTP', () => {
  let t: TestApp;
  let a: string;
  let b: string;
  let t0 = 0;
  const at = (minutes: number) => new Date(t0 + minutes * 60_000).toISOString();
  beforeAll(async () => {
    t = await testApp();
    // Event times in the last few hours before the service's clock.
    t0 = t.clock.now() - 4 * 3_600_000;
    a = (await t.account('business')).secret;
    b = (await t.account('business')).secret;
  });
  afterAll(() => t.close());

  const send = async (key: string, event: Record<string, unknown>): Promise<Answer> => {
    const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: event });
    expect(res.statusCode, res.body).toBe(202);
    return res.json() as Answer;
  };

  it('London then Tokyo twenty minutes later is challenged, and so is the actor’s next event, in that account only', async () => {
    await send(a, { event: 'auth.login.success', actor_id: 'alice', ip: '81.2.69.142', timestamp: at(0) });
    const tokyo = await send(a, { event: 'auth.login.success', actor_id: 'alice', ip: '1.0.16.1', timestamp: at(20) });
    expect(tokyo.alerts.map((x) => x.type)).toContain('auth.impossible_travel');
    expect(tokyo.risk.action).toBe('challenge');
    const next = await send(a, { event: 'data.accessed', actor_id: 'alice', ip: '1.0.16.1', timestamp: at(25) });
    expect(next.risk.action).toBe('challenge');
    expect(next.risk.breakdown.map((l) => l.source)).toContain('floor.standing.auth.impossible_travel');
    const elsewhere = await send(b, { event: 'data.accessed', actor_id: 'alice', ip: '1.0.16.1', timestamp: at(25) });
    expect(elsewhere.risk.action).toBe('allow');
  });

  it('marking the alert a false positive lifts its standing: the actor’s next event is allowed again', async () => {
    await send(a, { event: 'auth.login.success', actor_id: 'dave', ip: '81.2.69.142', timestamp: at(0) });
    const tokyo = await send(a, { event: 'auth.login.success', actor_id: 'dave', ip: '1.0.16.1', timestamp: at(20) });
    const alert = tokyo.alerts.find((x) => x.type === 'auth.impossible_travel');
    expect(alert).toBeDefined();
    expect((await send(a, { event: 'data.accessed', actor_id: 'dave', ip: '1.0.16.1', timestamp: at(22) })).risk.action).toBe('challenge');
    const patched = await t.vigil.app.inject({
      method: 'PATCH',
      url: `/v1/alerts/${alert?.id ?? ''}`,
      headers: bearer(a),
      payload: { status: 'false_positive' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const after = await send(a, { event: 'data.accessed', actor_id: 'dave', ip: '1.0.16.1', timestamp: at(24) });
    expect(after.risk.action).toBe('allow');
    expect(after.risk.breakdown.map((l) => l.source)).not.toContain('floor.standing.auth.impossible_travel');
  });

  it('a web login after a slow brute force on the account raises auth.login_after_failures and is challenged', async () => {
    for (let i = 0; i < 12; i++) await send(a, { event: 'auth.login.failure', actor_id: 'bob', ip: '81.2.69.150', timestamp: at(60 + i * 0.7) });
    const success = await send(a, { event: 'auth.login.success', actor_id: 'bob', ip: '81.2.69.150', timestamp: at(70) });
    expect(success.alerts.map((x) => x.type)).toEqual(['auth.login_after_failures']);
    expect(success.risk.action).toBe('challenge');
  });

  it('an MFA approval right after a fatigue burst is blocked', async () => {
    for (let i = 0; i < 5; i++) await send(a, { event: 'auth.mfa.challenge_failed', actor_id: 'carol', ip: '81.2.69.151', timestamp: at(120 + i * 0.3) });
    const approved = await send(a, { event: 'auth.mfa.challenge_passed', actor_id: 'carol', ip: '81.2.69.151', timestamp: at(122) });
    expect(approved.alerts.map((x) => x.type)).toContain('auth.mfa_fatigue_accepted');
    expect(approved.risk.action).toBe('block');
  });
});
