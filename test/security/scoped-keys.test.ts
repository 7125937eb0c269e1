import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertScopedKey, isScopedKey, localScopeAlias, scopedKey, TenantScopeError } from '../../src/event/tenancy.js';

/** The rule a scoped key follows: an account id or an in-process alias, `|`, then a part that does not start with `|`. */
const RULE = /^(?:acc_[0-9A-Za-z]{1,64}|#[0-9a-z]{1,12})\|[^|]/;

describe('scoped state keys', () => {
  it('accepts exactly the keys that start with an account scope', () => {
    const alias = fc.stringMatching(/^#[0-9a-z|#A-Z_]{0,15}$/);
    const account = fc.stringMatching(/^acc_[0-9A-Za-z|]{0,66}$/);
    const rest = fc.string({ maxLength: 6 });
    fc.assert(
      fc.property(fc.oneof(alias, account, fc.string()), fc.oneof(fc.constant(''), fc.constant('|'), fc.constant('||')), rest, (scope, bar, tail) => {
        const key = `${scope}${bar}${tail}`;
        expect(isScopedKey(key)).toBe(RULE.test(key));
      }),
      { numRuns: 5_000 },
    );
  });

  it('throws for a key without a scope, and builds keys with one', () => {
    const scope = localScopeAlias(35);
    expect(scopedKey(scope, 'w', 'actor:alice')).toBe('#z|w|actor:alice');
    expect(() => assertScopedKey('#z||w')).toThrow(TenantScopeError);
    expect(() => assertScopedKey('#|w')).toThrow(TenantScopeError);
    expect(() => assertScopedKey('#0123456789abc|w')).toThrow(TenantScopeError);
    expect(() => assertScopedKey('undefined|w')).toThrow(TenantScopeError);
    expect(() => assertScopedKey(undefined)).toThrow(TenantScopeError);
    expect(() => assertScopedKey('#0123456789ab|w')).not.toThrow();
  });
});
