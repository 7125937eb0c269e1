/**
 * Times and durations written as text or JSON, read by the same rules wherever they come in
 * (event timestamps, query filters, dry-run ranges, Sigma timespans, feed intervals):
 *
 * - a time is ISO 8601 text (`2026-01-31`, `2026-01-31T12:00Z`, `2026-01-31 12:00:00.123+01:00`)
 *   or Unix milliseconds: a JSON number, or in a query string (where everything is text) 1 to 16
 *   digits. Other date text (`Jan 31 2026`, RFC 2822) is not a time: what Date.parse makes of it
 *   differs between engines.
 * - a duration is a whole number of seconds (`90`) or a whole number and a unit: `s`, `m`, `h`,
 *   `d` or `w` (`5m`, `6h`, `1 d`).
 *
 * The one other time format is the HTTP date of a `Retry-After` header, read here too.
 */
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from './duration.js';

/** ISO 8601 date or date-time, with `T` or a space, optional seconds, fraction and zone (UTC without one). */
export const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** The largest time a JavaScript Date (and so every store) holds either side of 1970: 275760-09-13. */
export const MAX_TIME_MS = 8.64e15;

/**
 * A time read, or why the value is none: `form` (neither ISO 8601 text nor a finite number),
 * `date` (ISO 8601 in form but no such date, e.g. 2026-02-30T25:00Z) or `range` (a number beyond
 * the times a Date holds).
 */
export type TimeReading = { readonly ms: number; readonly problem?: undefined } | { readonly ms?: undefined; readonly problem: 'form' | 'date' | 'range' };

const FORM: TimeReading = { problem: 'form' };
const DATE: TimeReading = { problem: 'date' };
const RANGE: TimeReading = { problem: 'range' };

/** A time from JSON: ISO 8601 text, or Unix milliseconds as a number (a fraction is dropped). */
export function readTime(value: unknown): TimeReading {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return FORM;
    const ms = Math.trunc(value);
    return Math.abs(ms) > MAX_TIME_MS ? RANGE : { ms };
  }
  if (typeof value !== 'string' || !ISO_8601.test(value)) return FORM;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? DATE : { ms };
}

const MILLIS_TEXT = /^\d{1,16}$/;

/** A time from a query string: ISO 8601, or Unix milliseconds as 1 to 16 digits. */
export const readQueryTime = (text: string): TimeReading => readTime(MILLIS_TEXT.test(text) ? Number(text) : text);

const DURATION = /^(\d{1,12})\s*([smhdw]?)$/;
const UNIT_MS: Readonly<Record<string, number>> = { '': SECOND_MS, s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS, w: 7 * DAY_MS };

/** A duration in milliseconds: whole seconds as a number or digits, or digits and a unit; undefined when it is none. */
export function readDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value * SECOND_MS : undefined;
  if (typeof value !== 'string') return undefined;
  const m = DURATION.exec(value.trim());
  return m ? Number(m[1]) * (UNIT_MS[m[2] as string] as number) : undefined;
}

/** An HTTP date (`Sun, 06 Dec 2026 08:49:37 GMT`, and the obsolete forms HTTP still accepts) in Unix milliseconds; undefined when unreadable. */
export function readHttpDate(text: string): number | undefined {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
