import { describe, expect, it } from 'vitest';
import { GenerationCache } from '../../src/enrichment/generation-cache.js';

describe('GenerationCache', () => {
  it('computes a key once while it stays within two generations', () => {
    const cache = new GenerationCache<string, number>(2);
    let computed = 0;
    const get = (key: string) => cache.get(key, () => ++computed);
    expect([get('a'), get('a'), get('b'), get('a')]).toEqual([1, 1, 2, 1]);
    expect(computed).toBe(2);
  });

  it('peek finds both generations and promotes old hits; a key left in no generation is gone', () => {
    const cache = new GenerationCache<number, string>(2);
    cache.put(1, 'one');
    cache.put(2, 'two');
    cache.put(3, 'three'); // young was full: {1, 2} became the old generation
    expect(cache.peek(1)).toBe('one'); // promoted into the young generation {3, 1}
    cache.put(4, 'four'); // young full again: old {3, 1}, young {4}; 2 dropped
    expect(cache.peek(2)).toBeUndefined();
    expect([cache.peek(1), cache.peek(3), cache.peek(4)]).toEqual(['one', 'three', 'four']);
    expect(cache.size).toBeLessThanOrEqual(4);
  });
});
