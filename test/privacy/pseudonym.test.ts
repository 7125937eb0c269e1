import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { accountSecret, isPseudonym, normalisedIdentifier, PSEUDONYM_LENGTH, PseudonymKeys, pseudonymOf, SUBJECT_KINDS } from '../../src/privacy/pseudonym.js';

const MASTER = 'test-pseudonym-master-secret-0123456789';

describe('pseudonymOf', () => {
  const a = accountSecret(MASTER, 'acc_a');

  it('gives the same text for the same account, kind and value, and a recognisable shape', () => {
    const first = pseudonymOf(a, 'actor_id', 'dana');
    expect(pseudonymOf(accountSecret(MASTER, 'acc_a'), 'actor_id', 'dana')).toBe(first);
    expect(first).toMatch(/^p1:[A-Za-z0-9_-]{22}$/);
    expect(first).toHaveLength(PSEUDONYM_LENGTH);
    expect(isPseudonym(first)).toBe(true);
    expect(isPseudonym('dana')).toBe(false);
    expect(isPseudonym(`${first}x`)).toBe(false);
  });

  it('differs between accounts, kinds, values and master secrets', () => {
    const seen = new Set([
      pseudonymOf(a, 'actor_id', 'dana'),
      pseudonymOf(accountSecret(MASTER, 'acc_b'), 'actor_id', 'dana'),
      pseudonymOf(a, 'device_id', 'dana'),
      pseudonymOf(a, 'actor_id', 'dana2'),
      pseudonymOf(accountSecret(`${MASTER}!`, 'acc_a'), 'actor_id', 'dana'),
    ]);
    expect(seen.size).toBe(5);
  });

  it('normalises addresses through the one parser and emails by case', () => {
    expect(pseudonymOf(a, 'ip', '::ffff:203.0.113.7')).toBe(pseudonymOf(a, 'ip', '203.0.113.7'));
    expect(pseudonymOf(a, 'ip', '2001:DB8:0:0::1')).toBe(pseudonymOf(a, 'ip', '2001:db8::1'));
    expect(pseudonymOf(a, 'email', ' Dana@Example.COM')).toBe(pseudonymOf(a, 'email', 'dana@example.com'));
    expect(pseudonymOf(a, 'actor_id', 'Dana')).not.toBe(pseudonymOf(a, 'actor_id', 'dana'));
    expect(normalisedIdentifier('ip', 'not an address')).toBe('not an address');
  });

  it('keeps the key out of JSON and inspection', () => {
    const keys = new PseudonymKeys(MASTER);
    const secret = keys.forAccount('acc_a');
    expect(JSON.stringify(secret)).toBe('{"accountId":"acc_a"}');
    expect(inspect(secret, { showHidden: true, depth: 5 })).not.toMatch(/Buffer|<Buffer/);
    expect(JSON.stringify(keys)).toBe('{"available":true}');
    expect(inspect(keys, { showHidden: true })).not.toContain(MASTER);
  });

  it('refuses a secret it did not make', () => {
    expect(() => pseudonymOf({ accountId: 'acc_a' }, 'actor_id', 'dana')).toThrow(TypeError);
  });

  it('covers the four identifier kinds', () => {
    expect(SUBJECT_KINDS).toEqual(['actor_id', 'email', 'ip', 'device_id']);
  });
});

describe('PseudonymKeys', () => {
  it('derives the same key as accountSecret and none without a master secret', () => {
    const keys = new PseudonymKeys(MASTER);
    expect(keys.available).toBe(true);
    const secret = keys.forAccount('acc_a');
    expect(secret).toBe(keys.forAccount('acc_a'));
    expect(pseudonymOf(secret!, 'email', 'x@y.z')).toBe(pseudonymOf(accountSecret(MASTER, 'acc_a'), 'email', 'x@y.z'));
    const none = new PseudonymKeys(undefined);
    expect(none.available).toBe(false);
    expect(none.forAccount('acc_a')).toBeUndefined();
  });
});
