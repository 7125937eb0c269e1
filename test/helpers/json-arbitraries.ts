import fc from 'fast-check';

/**
 * Text of any code unit, and often the ones JSON escapes or lets through: quotes, backslashes,
 * control characters, DEL, lone surrogates, a surrogate pair, U+2028.
 */
export const escapingText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\ud800', '\udfff', '\u2028'), maxLength: 6 }),
  fc.constantFrom('\ud83d\ude00', 'x\ud83dy'),
);

/**
 * JSON-like values whose objects take their member names from `names`: leaves of escaping text,
 * numbers JSON writes as null or in exponent form, -0, booleans, null and undefined members and
 * items, nested a few levels.
 */
export function jsonLike(names: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    escapingText,
    fc.double(),
    fc.constantFrom(NaN, Infinity, -Infinity, -0, 1e21, 5e-7),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.constantFrom('10', '9', '-0', '__proto__'),
  );
  return fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
    array: fc.array(tie('node'), { maxLength: 4 }),
    object: fc.dictionary(names, tie('node'), { maxKeys: 5 }),
  })).node;
}
