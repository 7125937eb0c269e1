import { COMMANDS } from './cmdi.js';

/**
 * One pass over a raw string deciding whether any detector could match. Ordinary values (words,
 * digits, `-_./:@,` and spaces) skip decoding and detection entirely; only strings with an
 * encoding char or a char some attack syntax needs go further. Attacks made of letters alone
 * are caught by the word lists below, each checked only when the string has the char they need.
 */

const SUSPICIOUS = new Uint8Array(128);
for (const c of `'"<>;|&\`$(){}%\\=#*\n\r\0`) SUSPICIOUS[c.charCodeAt(0)] = 1;

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
    if (c >= 128 || SUSPICIOUS[c] === 1) return true;
    if (c === 46) {
      const next = raw.charCodeAt(i + 1);
      // `..`, and the wildcard segments `.?/`, `.*/` that match `..` on Windows.
      if (next === 46 || ((next === 63 || next === 42) && (raw.charCodeAt(i + 2) === 47 || raw.charCodeAt(i + 2) === 48))) return true;
    }
    // Dots and slashes written as hex text: `0x2e0x2e0x2f`.
    if (c === 48 && (raw.charCodeAt(i + 1) | 0x20) === 120 && (raw.charCodeAt(i + 2) === 50 || raw.charCodeAt(i + 2) === 53)) return true;
    if (c === 32 || c === 43 || c === 9) spaced = true;
    else if (c === 47) slashed = true;
    else if (c === 58) colon = true;
    else if (c >= 65 && c <= 90) upper = true;
  }
  if (raw.length < 5 || !(spaced || slashed || colon)) return false;
  const lower = upper ? raw.toLowerCase() : raw;
  return (
    (spaced && (containsAny(lower, SPACED_WORDS) || lower.startsWith('or ') || lower.startsWith('and ') || startsWithCommand(lower))) ||
    (slashed && containsAny(lower, PATH_WORDS)) ||
    (colon && containsAny(lower, SCHEME_WORDS))
  );
}
