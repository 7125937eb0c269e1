import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../../src/util/duration.js';
import { MAX_TIME_MS, readDuration, readHttpDate, readQueryTime, readTime } from '../../src/util/time-text.js';

const T = Date.UTC(2026, 0, 31, 12, 0, 0);

describe('readTime', () => {
  it('reads ISO 8601 dates and date-times, with T or a space, seconds, fractions and zones', () => {
    expect(readTime('2026-01-31')).toEqual({ ms: Date.UTC(2026, 0, 31) });
    expect(readTime('2026-01-31T12:00Z')).toEqual({ ms: T });
    expect(readTime('2026-01-31 12:00:00Z')).toEqual({ ms: T });
    expect(readTime('2026-01-31T12:00:00.123Z')).toEqual({ ms: T + 123 });
    expect(readTime('2026-01-31T13:00:00+01:00')).toEqual({ ms: T });
    expect(readTime('2026-01-31T13:00:00+0100')).toEqual({ ms: T });
  });

  it('reads Unix milliseconds as a number, dropping a fraction, within the times a Date holds', () => {
    expect(readTime(T)).toEqual({ ms: T });
    expect(readTime(T + 0.9)).toEqual({ ms: T });
    expect(readTime(-1)).toEqual({ ms: -1 });
    expect(readTime(MAX_TIME_MS)).toEqual({ ms: MAX_TIME_MS });
    expect(readTime(MAX_TIME_MS + 1)).toEqual({ problem: 'range' });
    expect(readTime(Number.NaN)).toEqual({ problem: 'form' });
    expect(readTime(Infinity)).toEqual({ problem: 'form' });
  });

  it('refuses date text in other forms, digits in JSON, and dates that do not exist', () => {
    for (const text of ['Jan 31 2026', 'Sat, 31 Jan 2026 12:00:00 GMT', '2026/01/31', '31-01-2026', '2026-01-31T12', '1769860800000', '', ' 2026-01-31'])
      expect(readTime(text), text).toEqual({ problem: 'form' });
    expect(readTime('2026-02-30T25:00Z')).toEqual({ problem: 'date' });
    expect(readTime(null)).toEqual({ problem: 'form' });
    expect(readTime(true)).toEqual({ problem: 'form' });
  });

  it('gives back the time of any ISO text Date writes, and any millisecond a Date holds', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.parse('0000-01-01T00:00:00Z'), max: Date.parse('9999-12-31T23:59:59.999Z') }), (ms) => {
        expect(readTime(new Date(ms).toISOString())).toEqual({ ms });
        expect(readTime(ms)).toEqual({ ms });
      }),
    );
  });
});

describe('readQueryTime', () => {
  it('reads 1 to 16 digits as Unix milliseconds and other text as readTime does', () => {
    expect(readQueryTime(String(T))).toEqual({ ms: T });
    expect(readQueryTime('0')).toEqual({ ms: 0 });
    expect(readQueryTime('2026-01-31T12:00Z')).toEqual({ ms: T });
    expect(readQueryTime('9999999999999999')).toEqual({ problem: 'range' });
    expect(readQueryTime('12345678901234567')).toEqual({ problem: 'form' });
    expect(readQueryTime('-1')).toEqual({ problem: 'form' });
    expect(readQueryTime('1e3')).toEqual({ problem: 'form' });
  });
});

describe('readDuration', () => {
  it('reads whole seconds, and a whole number with a unit s, m, h, d or w', () => {
    expect(readDuration(90)).toBe(90 * SECOND_MS);
    expect(readDuration('90')).toBe(90 * SECOND_MS);
    expect(readDuration('30s')).toBe(30 * SECOND_MS);
    expect(readDuration('5m')).toBe(5 * MINUTE_MS);
    expect(readDuration(' 6 h ')).toBe(6 * HOUR_MS);
    expect(readDuration('2d')).toBe(2 * DAY_MS);
    expect(readDuration('1w')).toBe(7 * DAY_MS);
    expect(readDuration(0)).toBe(0);
  });

  it('refuses fractions, negatives, other units and other types', () => {
    for (const value of [1.5, -1, '1.5h', '-5m', '5M', '1y', '5 minutes', 'h', '', null, undefined, Number.NaN, [5]])
      expect(readDuration(value), JSON.stringify(value)).toBeUndefined();
  });

  it('reads any count of any unit as that many of the unit', () => {
    const units = { s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS, w: 7 * DAY_MS };
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000 }), fc.constantFrom(...(Object.keys(units) as (keyof typeof units)[])), (n, unit) => {
        expect(readDuration(`${n}${unit}`)).toBe(n * units[unit]);
      }),
    );
  });
});

describe('readHttpDate', () => {
  it('reads the HTTP date of a Retry-After header, and nothing from other text', () => {
    expect(readHttpDate('Sat, 31 Jan 2026 12:00:00 GMT')).toBe(T);
    expect(readHttpDate('soon')).toBeUndefined();
  });
});
