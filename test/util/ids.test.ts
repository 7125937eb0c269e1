import { describe, expect, it } from 'vitest';
import { newId, ulid } from '../../src/util/ids.js';

describe('ulid', () => {
  it('sorts by time, then by creation order within one millisecond', () => {
    const ids = [ulid(1_000), ulid(1_000), ulid(1_000), ulid(2_000), ulid(2_000)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives 20,000 distinct ids across many pool refills, with fresh randomness per millisecond', () => {
    const start = Date.now() + 10_000;
    const ids = Array.from({ length: 20_000 }, (_, i) => newId('evt', start + i));
    expect(new Set(ids).size).toBe(ids.length);
    const randomParts = new Set(ids.map((id) => id.slice(-16)));
    expect(randomParts.size).toBe(ids.length);
    expect(ids.every((id) => /^evt_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
  });
});
