import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/util/json-text.js';
import { escapingText, jsonLike } from '../helpers/json-arbitraries.js';

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

const value = jsonLike(fc.oneof(escapingText, fc.constantFrom('10', '9', '1', 'a', 'ä', 'Z')));

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
