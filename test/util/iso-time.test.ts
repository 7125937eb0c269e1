import { describe, expect, it } from 'vitest';
import { isoDay, isoMonth, isoTime } from '../../src/util/iso-time.js';
import { seededRandom } from '../helpers/random.js';

const DAY = 86_400_000;
const expectSameAsDate = (ms: number) => {
  const iso = new Date(ms).toISOString();
  expect([isoTime(ms), isoDay(ms), isoMonth(ms)]).toEqual([iso, iso.slice(0, 10), iso.slice(0, 7)]);
};

describe('iso-time matches Date#toISOString', () => {
  it('at day, month and year edges, before 1970 and outside years 0-9999, in any order', () => {
    const edges = [
      0,
      -1,
      1,
      DAY - 1,
      DAY,
      Date.UTC(2026, 0, 31, 23, 59, 59, 999),
      Date.UTC(2026, 1, 1),
      Date.UTC(2024, 1, 29, 12),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    const extended = [Date.UTC(10_000, 0, 1), -62_198_755_200_001, 8.64e15, -8.64e15];
    for (const ms of [...edges, ...extended, ...edges.reverse()]) expectSameAsDate(ms);
  });

  it('for random times, alternating between days as occurred and received times do', () => {
    const random = seededRandom(7);
    const now = Date.UTC(2026, 5, 1);
    for (let i = 0; i < 5000; i++) {
      expectSameAsDate(now + Math.floor(random() * DAY));
      expectSameAsDate(now - Math.floor(random() * 400 * DAY));
    }
  });

  it('fractional and invalid times behave as Date does', () => {
    expectSameAsDate(1_700_000_000_123.9);
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
