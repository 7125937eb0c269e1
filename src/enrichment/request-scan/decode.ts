/**
 * Decoding steps applied before detection, after the transformation chains of web application
 * firewalls (ModSecurity CRS: urlDecodeUni, utf8toUnicode, htmlEntityDecode, normalisePath,
 * removeNulls, lowercase) and of the servers attackers aim at (IIS lax hex and overlong UTF-8, %u).
 * Each step is exported on its own so it can be tested; `normalise` chains them to a fixed point.
 * Every step is a single linear pass (no regex), the output of every step but NFKC is never longer
 * than its input, and the chain runs a bounded number of rounds with a bounded output size, so adversarial input costs time proportional to its length.
 */

/** Rounds of percent and entity decoding: enough for `%25252e` (triple) and nested `%%32%%65`. */
export const MAX_DECODE_ROUNDS = 6;
/** Decoding shrinks text; only NFKC grows it (`ﬁ` is `fi`), and a round past this size is not taken. */
const MAX_GROWTH = 4;

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

/**
 * IIS's lax hex: a letter past `f` still counts (`p` is 25), the byte is the low eight bits. Only
 * read inside a multi-byte sequence (`%c1%pc`, `%bg%qf`, `%c0%9v`), where nothing but evasion
 * puts one: `50%off` stays text.
 */
function laxHexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 122) return l - 87;
  return -1;
}

function laxByte(s: string, i: number): number {
  const h = laxHexValue(s.charCodeAt(i + 1));
  const l = laxHexValue(s.charCodeAt(i + 2));
  return h >= 0 && l >= 0 ? (h * 16 + l) & 0xff : -1;
}

/**
 * Percent-decoding that never throws: `%XX` bytes are decoded as permissive UTF-8 (overlong forms
 * such as `%c0%af` map to the character they smuggle, as vulnerable servers did), `%uXXXX` (IIS)
 * is honoured, a hex pair split by a percent sign (`%2%e`, what `%%32%%65` leaves after one round)
 * is one byte, lax hex continues a multi-byte sequence, other malformed escapes are kept literally.
 * `plusIsSpace` for query strings.
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
        // `%2%e`: the two hex digits of one byte, each behind its own percent sign.
        if (h >= 0 && s.charCodeAt(i + 2) === 37 && i + 3 < n) {
          const l2 = hexValue(s.charCodeAt(i + 3));
          if (l2 >= 0) {
            bytes.push(h * 16 + l2);
            i += 4;
            continue;
          }
        }
        // Lax hex: a lead byte of an overlong form (`%bg` is 0xc0), or a byte after a lead.
        const lax = laxByte(s, i);
        const last = bytes.length > 0 ? (bytes[bytes.length - 1] ?? 0) : -1;
        if (lax >= 0 && ((last >= 0xc0 && lax >= 0x80) || ((lax === 0xc0 || lax === 0xc1) && s.charCodeAt(i + 3) === 37))) {
          bytes.push(lax);
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

/** Characters a path traversal smuggles: `.`, `/` and `\`. */
function isPathChar(c: number): boolean {
  return c === 0x2e || c === 0x2f || c === 0x5c;
}

/**
 * `0xc0`/`0xc1` never start valid UTF-8: whatever follows them, the pair was built to smuggle an
 * ASCII char past a filter. Decoders differ on the bits they keep (`%c0%af` `/`, `%c1%9c` `\`,
 * `%c0%2f` `/`, `%c1%af`), so a path char named by the low six bits, with or without bit six, wins.
 */
function overlongPair(b0: number, b1: number): number {
  const low = b1 & 0x3f;
  if (isPathChar(low)) return low;
  if (isPathChar(low | 0x40)) return low | 0x40;
  return ((b0 & 1) << 6) | low;
}

/** UTF-8 decoding that accepts overlong encodings (up to six bytes) and maps invalid bytes to Latin-1 characters. */
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
    if ((b0 === 0xc0 || b0 === 0xc1) && i + 1 < n) {
      out += String.fromCharCode(overlongPair(b0, bytes[i + 1] ?? 0));
      i += 2;
      continue;
    }
    const need = b0 >= 0xfc && b0 < 0xfe ? 5 : b0 >= 0xf8 && b0 < 0xfc ? 4 : b0 >= 0xf0 && b0 < 0xf8 ? 3 : b0 >= 0xe0 ? 2 : b0 >= 0xc0 ? 1 : 0;
    let cp = need === 5 ? b0 & 0x01 : need === 4 ? b0 & 0x03 : need === 3 ? b0 & 0x07 : need === 2 ? b0 & 0x0f : b0 & 0x1f;
    let ok = need > 0 && i + need < n;
    for (let k = 1; ok && k <= need; k++) {
      const b = bytes[i + k];
      if (b === undefined || (b & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (b & 0x3f);
    }
    // Five- and six-byte forms exist only as overlong ASCII (`%f8%80%80%80%af`).
    if (ok && (need < 4 ? cp <= 0x10ffff : cp < 0x80)) {
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
 * Full normalisation: URL decoding (with %u, overlong UTF-8, split and lax hex) and HTML entity
 * decoding repeated to a fixed point, at most MAX_DECODE_ROUNDS rounds (so `%252e`, `%%32%%65` and
 * `&amp;lt;` unwrap), NFKC, null-byte removal, then case folding. No round makes the string longer
 * than the one before it but NFKC, and a round whose output passes MAX_GROWTH times the input is
not taken, so the work is at most MAX_DECODE_ROUNDS passes over a string of bounded size.
 */
export function normalise(raw: string, plusIsSpace = false): string {
  if (!mayNeedDecoding(raw)) return raw.toLowerCase();
  let s = raw;
  for (let round = 0; round < MAX_DECODE_ROUNDS; round++) {
    const next = normaliseUnicode(decodeHtmlEntities(percentDecode(s, plusIsSpace && round === 0)));
    if (next === s || next.length > MAX_GROWTH * raw.length + 64) break;
    s = next;
  }
  return stripNullBytes(s).toLowerCase();
}
