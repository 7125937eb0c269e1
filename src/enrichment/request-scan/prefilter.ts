import { COMMANDS } from './cmdi.js';

/**
 * One pass over a raw string deciding whether any detector could match. Ordinary values (words,
 * digits, `-_./:@,` and spaces) skip decoding and detection entirely; only strings with an
 * encoding char or a char some attack syntax needs go further. Attacks made of letters alone
 * are caught by the word lists below, each checked only when the string has the char they need.
 */

/**
 * What each ASCII char means to the pass, so that the chars of ordinary values (lower-case
 * letters, digits, `-_,@`) cost one table read: SUSPICIOUS ends the pass, the others are looked at.
 */
const PLAIN = 0;
const SUSPICIOUS = 1;
const DOT = 2;
const ZERO = 3;
const SPACE = 4;
const SLASH = 5;
const COLON = 6;
const UPPER = 7;
const CHAR_CLASS = new Uint8Array(128);
for (const c of `'"<>;|&\`$(){}%\\=#*\n\r\0`) CHAR_CLASS[c.charCodeAt(0)] = SUSPICIOUS;
CHAR_CLASS[46] = DOT;
CHAR_CLASS[48] = ZERO;
for (const c of [32, 43, 9]) CHAR_CLASS[c] = SPACE;
CHAR_CLASS[47] = SLASH;
CHAR_CLASS[58] = COLON;
for (let c = 65; c <= 90; c++) CHAR_CLASS[c] = UPPER;

/** Keyword attacks with spaces but no special char: `1 union select 1,2`, `1 or true`, `x || id` is special anyway. */
const SPACED_WORDS = [
  'union',
  'order',
  'group',
  'having',
  'sleep',
  'waitfor',
  'exec',
  'drop',
  ' or ',
  ' and ',
  ' xor ',
  ' or true',
  'nc -',
  'bash -',
  'sh -',
  'python -',
  'perl -',
  'powershell',
];
/** Sensitive files named without `..` (`?file=/etc/passwd`). */
const PATH_WORDS = ['etc/', 'win.ini', 'boot.ini', 'system32', 'proc/self', 'dev/tcp'];
/** URL schemes: `javascript:`, LFI wrappers, `data:` documents. */
const SCHEME_WORDS = ['script:', 'file:', 'php:', 'expect:', 'phar:', 'zip:', 'data:'];

/** A value that starts with a shell command word followed by an argument (`ls -l /`, `curl https://…`). */
function startsWithCommand(lower: string): boolean {
  const end = lower.indexOf(' ');
  if (end === -1 || end > MAX_COMMAND_WORD) return false;
  const slash = lower.lastIndexOf('/', end);
  return COMMANDS.has(lower.slice(slash + 1, end));
}

/** Longer first words are no command (`/usr/local/bin/python3` fits). */
const MAX_COMMAND_WORD = 32;

function containsAny(s: string, words: readonly string[]): boolean {
  for (const w of words) if (s.includes(w)) return true;
  return false;
}

export function mayBeMalicious(raw: string): boolean {
  let spaced = false;
  let slashed = false;
  let colon = false;
  let upper = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 128) return true;
    const cls = CHAR_CLASS[c] as number;
    if (cls === PLAIN) continue;
    if (cls === SUSPICIOUS) return true;
    if (cls === DOT) {
      const next = raw.charCodeAt(i + 1);
      // `..`, and the wildcard segments `.?/`, `.*/` that match `..` on Windows.
      if (next === 46 || ((next === 63 || next === 42) && (raw.charCodeAt(i + 2) === 47 || raw.charCodeAt(i + 2) === 48))) return true;
    } else if (cls === ZERO) {
      // Dots and slashes written as hex text: `0x2e0x2e0x2f`.
      if ((raw.charCodeAt(i + 1) | 0x20) === 120 && (raw.charCodeAt(i + 2) === 50 || raw.charCodeAt(i + 2) === 53)) return true;
    } else if (cls === SPACE) spaced = true;
    else if (cls === SLASH) slashed = true;
    else if (cls === COLON) colon = true;
    else upper = true;
  }
  if (raw.length < 5 || !(spaced || slashed || colon)) return false;
  const lower = upper ? raw.toLowerCase() : raw;
  return (
    (spaced && (containsAny(lower, SPACED_WORDS) || lower.startsWith('or ') || lower.startsWith('and ') || startsWithCommand(lower))) ||
    (slashed && containsAny(lower, PATH_WORDS)) ||
    (colon && containsAny(lower, SCHEME_WORDS))
  );
}
