import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flatten } from '../../src/util/flatten.js';

describe('flatten', () => {
  it('gives the same text for any string, lone surrogates and pairs split at the first character included', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 8 }), (parts) => {
        const joined = parts.reduce((text, part) => `${text}${part}|`, '');
        expect(flatten(joined)).toBe(joined);
      }),
      { numRuns: 2000 },
    );
    expect(flatten('\u{1f600}'.repeat(7))).toBe('\u{1f600}'.repeat(7));
    expect(flatten('short')).toBe('short');
  });
});
