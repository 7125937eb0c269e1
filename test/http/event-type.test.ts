import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPE_PATTERN } from '../../src/pipeline/event-schema.js';
import type { TestApp } from '../helpers/app.js';
import { expectError, getJson, postEvent, roomyApp } from './support.js';

const seg = (n: number, first = 'a') => first + 'b'.repeat(n - 1);

/** rule by rule, with the edges. [type, valid, why] */
const CASES: [string, boolean, string][] = [
  ['auth.login', true, 'two segments'],
  ['auth.login.failure', true, 'three segments'],
  ['custom.billing.refund.issued', true, 'four segments'],
  ['server.container.escape_attempt', true, 'underscore after the first segment'],
  ['a.b', true, 'one-letter segments'],
  ['api2.v2', true, 'digits after the first letter'],
  ['custom.a_b_c.d_e', true, 'underscores in several later segments'],
  ['custom.x_', true, 'trailing underscore in a later segment'],
  [`${seg(30)}.x`, true, '30-character first segment'],
  [`x.${seg(30)}`, true, '30-character later segment'],
  [`${seg(30)}.${seg(30)}.${seg(30)}.${seg(7)}`, true, '100 characters in all (4 segments)'],
  ['auth', false, 'a single segment'],
  ['', false, 'empty'],
  ['a.b.c.d.e', false, 'five segments'],
  [`${seg(31)}.x`, false, '31-character first segment'],
  [`x.${seg(31)}`, false, '31-character later segment'],
  [`${seg(30)}.${seg(30)}.${seg(30)}.${seg(8)}`, false, '101 characters in all'],
  ['auth_x.login', false, 'underscore in the first segment'],
  ['1auth.login', false, 'digit first'],
  ['auth.1login', false, 'later segment starting with a digit'],
  ['auth._login', false, 'later segment starting with an underscore'],
  ['Auth.login', false, 'uppercase first letter'],
  ['auth.Login', false, 'uppercase in a later segment'],
  ['AUTH.LOGIN', false, 'all uppercase'],
  ['auth.log in', false, 'space inside'],
  [' auth.login', false, 'leading space'],
  ['auth.login ', false, 'trailing space'],
  ['auth.login.', false, 'trailing dot'],
  ['.auth.login', false, 'leading dot'],
  ['auth..login', false, 'empty segment'],
  ['auth-login.x', false, 'hyphen'],
  ['auth.login-failure', false, 'hyphen in a later segment'],
  ['auth.lögin', false, 'non-ASCII letter'],
  ['auth.login\n', false, 'trailing newline'],
  ['auth/login.x', false, 'slash'],
  ['inferred:auth.failure', false, 'colon (inferred tags are not sendable types)'],
];

describe('event type format through POST /v1/events', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await roomyApp();
    key = (await t.account('pro')).secret;
  });
  afterAll(() => t.close());

  it('the table has at least 25 rows and the 100-character edges are right', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(25);
    expect(CASES[10]?.[0]).toHaveLength(100);
    expect(CASES[16]?.[0]).toHaveLength(101);
  });

  it.each(CASES)('%j valid=%s (%s)', async (type, valid) => {
    // The 101-character case matches the expression; only the length rule rejects it.
    if (type.length <= 100) expect(new RegExp(EVENT_TYPE_PATTERN).test(type)).toBe(valid);
    const res = await postEvent(t, key, { event: type, actor_id: 'u1' });
    if (valid) {
      expect(res.statusCode).toBe(202);
      const stored = await getJson(t, key, `/v1/events/${res.json().id}`);
      expect(stored.json().event).toBe(type);
    } else {
      const body = expectError(res, 400, 'INVALID_EVENT');
      expect(body.details?.[0]?.field).toBe('event');
      expect(body.message).toContain(EVENT_TYPE_PATTERN.replace(/\\\\/g, '\\'));
    }
  });

  it.each([[123], [null], [true], [['auth.login']], [{ type: 'auth.login' }]])('a non-string type %j is rejected', async (value) => {
    const body = expectError(await postEvent(t, key, { event: value }), 400, 'INVALID_EVENT');
    expect(body.details?.[0]?.field).toBe('event');
  });

  it('the same rules apply to each event of a batch, reported by index', async () => {
    const res = await postEvent(
      t,
      key,
      { events: [{ event: 'auth.login' }, { event: 'a.b.c.d.e' }, { event: 'x.y' }, { event: 'Bad.type' }] },
      '/v1/events/batch',
    );
    const body = expectError(res, 400, 'INVALID_EVENT');
    expect(body.details?.map((d) => [d.index, d.field])).toEqual([
      [1, 'event'],
      [3, 'event'],
    ]);
  });
});
