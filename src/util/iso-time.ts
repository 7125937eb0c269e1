/**
 * ISO 8601 UTC text for event times, without a Date and its formatting per call: every stored
 * event and every 202 carries one or two, and they nearly all fall on the current day. The
 * date part is formatted once per day; the time of day is plain arithmetic.
 */
import { DAY_MS } from './duration.js';
const TIME_LENGTH = 'HH:MM:SS.mmmZ'.length;

let dayStart = NaN;
/** `YYYY-MM-DDT` of the cached day (`+YYYYYY-MM-DDT` outside years 0-9999). */
let datePrefix = '';
let day = '';
let month = '';

function enterDay(ms: number): void {
  dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
  const iso = new Date(dayStart).toISOString();
  datePrefix = iso.slice(0, -TIME_LENGTH);
  day = iso.slice(0, 10);
  month = iso.slice(0, 7);
}

const within = (ms: number): boolean => ms >= dayStart && ms < dayStart + DAY_MS;
/** Whole milliseconds a Date can hold; anything else goes to Date itself (fractions, NaN, out of range). */
const MAX_TIME = 8.64e15;
const plain = (ms: number): boolean => Number.isInteger(ms) && ms <= MAX_TIME && ms >= -MAX_TIME;

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** Same text as `new Date(ms).toISOString()` (which throws for an invalid time, as this does). */
export function isoTime(ms: number): string {
  if (!plain(ms)) return new Date(ms).toISOString();
  if (!within(ms)) enterDay(ms);
  let t = ms - dayStart;
  const milli = t % 1000;
  t = (t - milli) / 1000;
  const second = t % 60;
  t = (t - second) / 60;
  const minute = t % 60;
  const hour = (t - minute) / 60;
  return `${datePrefix}${two(hour)}:${two(minute)}:${two(second)}.${three(milli)}Z`;
}

/** `YYYY-MM-DD` in UTC: `new Date(ms).toISOString().slice(0, 10)`. */
export function isoDay(ms: number): string {
  if (!plain(ms)) return new Date(ms).toISOString().slice(0, 10);
  if (!within(ms)) enterDay(ms);
  return day;
}

/** `YYYY-MM` in UTC: `new Date(ms).toISOString().slice(0, 7)`. */
export function isoMonth(ms: number): string {
  if (!plain(ms)) return new Date(ms).toISOString().slice(0, 7);
  if (!within(ms)) enterDay(ms);
  return month;
}
