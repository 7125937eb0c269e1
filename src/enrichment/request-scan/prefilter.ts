/**
 * One pass over a raw string deciding whether any detector could match. Ordinary values (words,
 * digits, `-_./:@,` and spaces) skip decoding and detection entirely; only strings with an
 * encoding char or a char some attack syntax needs go further. Keyword-only SQL (`1 union select
 * 1,2`) has a space or `+` and a letter sequence we check for explicitly.
 */

const SUSPICIOUS = new Uint8Array(128);
for (const c of `'"<>;|&\`$(){}%\\=#*\n\r\0`) SUSPICIOUS[c.charCodeAt(0)] = 1;

/** Words that can make an attack with no special character at all. */
const BARE_ATTACK_WORDS = ['union', 'order', 'group', 'having', 'sleep', 'waitfor', 'exec', 'drop', 'dev/tcp', 'script:', 'etc/', 'win.ini', 'boot.ini', 'system32', 'proc/self', 'xp_', 'nc -', 'file:', 'php:', 'expect:', 'phar:', 'zip:', 'data:', ' or ', ' and ', ' xor ', '+or+', '+and+'];

export function mayBeMalicious(raw: string): boolean {
  let spaced = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 128 || SUSPICIOUS[c] === 1) return true;
    if (c === 46 && raw.charCodeAt(i + 1) === 46) return true;
    if (c === 32 || c === 43 || c === 9) spaced = true;
  }
  if (raw.length < 5) return false;
  const lower = /[A-Z]/.test(raw) ? raw.toLowerCase() : raw;
  for (const w of BARE_ATTACK_WORDS) {
    if ((spaced || w.indexOf(' ') === -1) && lower.includes(w)) return true;
  }
  return false;
}
