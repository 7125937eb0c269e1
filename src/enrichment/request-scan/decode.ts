/**
 * Decoding steps applied before detection. Each step is exported on its own so it can be tested;
 * `normalise` chains them. Every step is a single linear pass (no regex), so adversarial input
 * costs time proportional to its length.
 */

const MAX_DECODE_ROUNDS = 4;

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

/**
 * Percent-decoding that never throws: `%XX` bytes are decoded as permissive UTF-8 (overlong forms
 * such as `%c0%af` map to the character they smuggle, as vulnerable servers did), `%uXXXX` (IIS)
 * is honoured, malformed escapes are kept literally. `plusIsSpace` for query strings.
 */
export function percentDecode(s: string, plusIsSpace = false): string {
  if (s.indexOf('%') === -1 && !(plusIsSpace && s.indexOf('+') !== -1)) return s;
  let out = '';
  let i = 0;
  const n = s.length;
  const bytes: number[] = [];
  const flush = (): void => {
    if (bytes.length > 0) {
      out += decodeBytesPermissive(bytes);
      bytes.length = 0;
    }
  };
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 37 /* % */) {
      if (i + 2 < n) {
        const h = hexValue(s.charCodeAt(i + 1));
        const l = hexValue(s.charCodeAt(i + 2));
        if (h >= 0 && l >= 0) {
          bytes.push(h * 16 + l);
          i += 3;
          continue;
        }
      }
      if (i + 5 < n && (s.charCodeAt(i + 1) | 0x20) === 117 /* u */) {
        const a = hexValue(s.charCodeAt(i + 2));
        const b = hexValue(s.charCodeAt(i + 3));
        const d = hexValue(s.charCodeAt(i + 4));
        const e = hexValue(s.charCodeAt(i + 5));
        if (a >= 0 && b >= 0 && d >= 0 && e >= 0) {
          flush();
          out += String.fromCharCode(a * 4096 + b * 256 + d * 16 + e);
          i += 6;
          continue;
        }
      }
    }
    flush();
    out += plusIsSpace && c === 43 ? ' ' : s[i];
    i++;
  }
  flush();
  return out;
}

/** UTF-8 decoding that accepts overlong encodings and maps invalid bytes to Latin-1 characters. */
export function decodeBytesPermissive(bytes: readonly number[]): string {
  let out = '';
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b0 = bytes[i] ?? 0;
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      i++;
      continue;
    }
    const need = b0 >= 0xf0 && b0 < 0xf8 ? 3 : b0 >= 0xe0 ? 2 : b0 >= 0xc0 ? 1 : 0;
    let cp = need === 3 ? b0 & 0x07 : need === 2 ? b0 & 0x0f : b0 & 0x1f;
    let ok = need > 0 && i + need < n;
    for (let k = 1; ok && k <= need; k++) {
      const b = bytes[i + k];
      if (b === undefined || (b & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (b & 0x3f);
    }
    if (ok && cp <= 0x10ffff) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += String.fromCharCode(b0);
      i++;
    }
  }
  return out;
}

/** Named entities attackers use to hide syntax; the rest of the HTML table cannot help an attack. */
const NAMED_ENTITIES: ReadonlyMap<string, string> = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
  ['amp', '&'],
  ['nbsp', ' '],
  ['colon', ':'],
  ['semi', ';'],
  ['tab', '\t'],
  ['newline', '\n'],
  ['lpar', '('],
  ['rpar', ')'],
  ['sol', '/'],
  ['bsol', '\\'],
  ['period', '.'],
  ['grave', '`'],
  ['excl', '!'],
  ['equals', '='],
  ['plus', '+'],
  ['lsqb', '['],
  ['rsqb', ']'],
  ['lbrack', '['],
  ['rbrack', ']'],
  ['lcub', '{'],
  ['rcub', '}'],
  ['lbrace', '{'],
  ['rbrace', '}'],
  ['vert', '|'],
  ['verbar', '|'],
  ['dollar', '$'],
  ['num', '#'],
  ['percnt', '%'],
  ['ast', '*'],
  ['comma', ','],
  ['quest', '?'],
  ['commat', '@'],
  ['hyphen', '-'],
  ['dash', '-'],
  ['lowbar', '_'],
]);

const MAX_ENTITY_NAME = 8;
const MAX_NUMERIC_DIGITS = 10;

/** HTML character references: named (with or without `;`), decimal `&#39;`, hex `&#x27;`. */
export function decodeHtmlEntities(s: string): string {
  if (s.indexOf('&') === -1) return s;
  let out = '';
  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c !== 38 /* & */) {
      out += s[i];
      i++;
      continue;
    }
    let j = i + 1;
    if (s.charCodeAt(j) === 35 /* # */) {
      j++;
      const hex = (s.charCodeAt(j) | 0x20) === 120; /* x */
      if (hex) j++;
      let cp = 0;
      let digits = 0;
      while (j < n && digits < MAX_NUMERIC_DIGITS + 6) {
        const d = hex ? hexValue(s.charCodeAt(j)) : s.charCodeAt(j) - 48;
        if (d < 0 || d > (hex ? 15 : 9)) break;
        cp = cp * (hex ? 16 : 10) + d;
        if (cp > 0x10ffff) cp = 0x110000;
        digits++;
        j++;
      }
      if (digits > 0 && cp <= 0x10ffff) {
        if (s.charCodeAt(j) === 59 /* ; */) j++;
        out += String.fromCodePoint(cp);
        i = j;
        continue;
      }
      out += '&';
      i++;
      continue;
    }
    let name = '';
    while (j < n && name.length < MAX_ENTITY_NAME) {
      const l = s.charCodeAt(j) | 0x20;
      if (l < 97 || l > 122) break;
      name += String.fromCharCode(l);
      j++;
    }
    const rep = name.length > 0 ? NAMED_ENTITIES.get(name) : undefined;
    if (rep !== undefined) {
      if (s.charCodeAt(j) === 59) j++;
      out += rep;
      i = j;
    } else {
      out += '&';
      i++;
    }
  }
  return out;
}

/** NFKC folds fullwidth and compatibility forms (`＜`, `．`, `／`, `ｓｃｒｉｐｔ`) into ASCII. */
export function normaliseUnicode(s: string): string {
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) return s.normalize('NFKC');
  }
  return s;
}

/** Null bytes (and other C0 controls but tab/newline) are dropped: they truncate or split tokens. */
export function stripNullBytes(s: string): string {
  let found = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 32 && c !== 9 && c !== 10 && c !== 13) {
      found = true;
      break;
    }
  }
  if (!found) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 32 || c === 9 || c === 10 || c === 13) out += s[i];
  }
  return out;
}

/** Chars whose presence means some decoding step could change the string. */
function mayNeedDecoding(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 37 || c === 38 || c === 43 || c < 32 || c > 0x7f) return true;
  }
  return false;
}

/**
 * Full normalisation: repeated URL decoding and HTML entity decoding (up to a few rounds, until
 * stable, so `%252e` and `&amp;lt;` unwrap), NFKC, null-byte removal, then case folding.
 */
export function normalise(raw: string, plusIsSpace = false): string {
  if (!mayNeedDecoding(raw)) return raw.toLowerCase();
  let s = raw;
  for (let round = 0; round < MAX_DECODE_ROUNDS; round++) {
    const next = normaliseUnicode(decodeHtmlEntities(percentDecode(s, plusIsSpace && round === 0)));
    if (next === s) break;
    s = next;
  }
  return stripNullBytes(s).toLowerCase();
}
