import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/util/json-text.js';

/** The rule written plainly: JSON.stringify for every key and leaf, members in code-unit order. */
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${reference(record[key])}`);
  return `{${members.join(',')}}`;
}

// Any code unit, and often the ones that need escaping or not: lone surrogates, a pair, control
// characters, quotes, backslashes, U+2028.
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '\u0000', '\u001f', '\u007f', '\ud800', '\udfff', '\u2028'), maxLength: 6 }),
  fc.constantFrom('\ud83d\ude00', 'x\ud83dy'),
);
const leaf = fc.oneof(
  text,
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 1e21, 5e-7),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom('10', '9', '-0', '__proto__'),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(text, fc.constantFrom('10', '9', '1', 'a', 'ä', 'Z')), tie('node'), { maxKeys: 5 }),
})).node;

describe('canonicalJson', () => {
  it('is the plain rule’s text for any value: strings needing escapes, integer-like keys, -0, NaN, undefined members', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(reference(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives one text for bodies that are the same JSON value', () => {
    const a = JSON.parse('{"b":[1,{"y":"\\u0000","x":-0}],"a":"\\ud800","10":true,"9":null}') as unknown;
    const b = JSON.parse('{"9":null,"10":true,"a":"\\ud800","b":[1,{"x":0,"y":"\\u0000"}]}') as unknown;
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"10":true,"9":null,"a":"\\ud800","b":[1,{"x":0,"y":"\\u0000"}]}');
  });
});
