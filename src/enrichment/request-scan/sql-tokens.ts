/**
 * A small SQL tokenizer in the spirit of libinjection: it turns already-normalised (lower-case)
 * text into token classes. Quotes are not parsed as string literals but emitted as BREAK tokens, so
 * the rules can reason about "the attacker closed the string here". Comments are tokens too
 * (`--`, `#`, `/* *\/`), except MySQL versioned comments `/*!50000 ... *\/`, whose content is
 * executed by MySQL and is therefore tokenized. One linear pass, into reusable buffers.
 */

/**
 * Token classes. Plain numbers (not an enum object) so hot loops in other modules compare
 * against local constants instead of reading an imported binding per token.
 */
export const T_END = 0;
export const T_NUM = 1;
export const T_BARE = 2;
export const T_KEYWORD = 3;
export const T_LOGIC = 4;
export const T_UNION = 5;
export const T_STATEMENT = 6;
export const T_FUNC = 7;
export const T_VAR = 8;
export const T_OP = 9;
export const T_LPAREN = 10;
export const T_RPAREN = 11;
export const T_COMMA = 12;
export const T_SEMI = 13;
export const T_DOT = 14;
export const T_COMMENT = 15;
export const T_BREAK = 16;
export const T_OTHER = 17;
export type Tok = number;

/** Operator sub-kinds stored in `aux` for Op tokens. */
export const OP_COMPARE = 1;
export const OP_ARITH = 2;

const LOGIC_WORDS = new Set(['and', 'or', 'xor']);
const STATEMENT_WORDS = new Set([
  'select',
  'insert',
  'update',
  'delete',
  'drop',
  'create',
  'alter',
  'truncate',
  'exec',
  'execute',
  'declare',
  'shutdown',
  'waitfor',
  'grant',
  'revoke',
  'call',
  'rename',
  'merge',
]);
const KEYWORDS = new Set([
  'from',
  'where',
  'like',
  'rlike',
  'regexp',
  'in',
  'is',
  'null',
  'by',
  'order',
  'group',
  'having',
  'limit',
  'offset',
  'into',
  'as',
  'case',
  'when',
  'then',
  'else',
  'end',
  'all',
  'distinct',
  'table',
  'database',
  'set',
  'values',
  'outfile',
  'dumpfile',
  'delay',
  'exists',
  'between',
  'procedure',
  'top',
  'true',
  'false',
  'not',
  'sounds',
  'div',
  'mod',
  'collate',
  'escape',
  'with',
  'time',
]);
/** Keywords that still behave as operands or operators when followed by `(`. */
const PAREN_KEYWORDS = new Set(['in', 'exists', 'values', 'not', 'all', 'distinct', 'as', 'then', 'else', 'when', 'from', 'where', 'into', 'by', 'is', 'like']);
/** SQL functions an attacker calls with a space before `(`; other words need `(` adjacent. */
const SPACED_FUNCTIONS = new Set([
  'sleep',
  'pg_sleep',
  'benchmark',
  'char',
  'chr',
  'concat',
  'ascii',
  'substring',
  'substr',
  'count',
  'version',
  'user',
  'database',
  'if',
  'iif',
  'cast',
  'convert',
  'extractvalue',
  'updatexml',
  'load_file',
  'md5',
  'mid',
  'ord',
  'hex',
  'unhex',
  'length',
  'randomblob',
]);

export interface TokenBuffer {
  kind: Uint8Array;
  start: Int32Array;
  end: Int32Array;
  /** Op sub-kind, or the quote char code for Break tokens. */
  aux: Int32Array;
  count: number;
}

let buffer: TokenBuffer = allocate(256);

function allocate(size: number): TokenBuffer {
  return { kind: new Uint8Array(size), start: new Int32Array(size), end: new Int32Array(size), aux: new Int32Array(size), count: 0 };
}

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 0x7f;
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0;
}

function push(kind: Tok, start: number, end: number, aux: number): void {
  if (buffer.count === buffer.kind.length) {
    const grown = allocate(buffer.kind.length * 2);
    grown.kind.set(buffer.kind);
    grown.start.set(buffer.start);
    grown.end.set(buffer.end);
    grown.aux.set(buffer.aux);
    grown.count = buffer.count;
    buffer = grown;
  }
  const i = buffer.count++;
  buffer.kind[i] = kind;
  buffer.start[i] = start;
  buffer.end[i] = end;
  buffer.aux[i] = aux;
}

/** Which of the word lists above each listed word is in: one lookup per word of the text. */
const IS_LOGIC = 1;
const IS_UNION = 2;
const IS_STATEMENT = 4;
const IS_KEYWORD = 8;
const IS_PAREN_KEYWORD = 16;
const IS_SPACED_FUNCTION = 32;
const WORD_LISTS = new Map<string, number>();
for (const [list, bit] of [
  [LOGIC_WORDS, IS_LOGIC],
  [new Set(['union']), IS_UNION],
  [STATEMENT_WORDS, IS_STATEMENT],
  [KEYWORDS, IS_KEYWORD],
  [PAREN_KEYWORDS, IS_PAREN_KEYWORD],
  [SPACED_FUNCTIONS, IS_SPACED_FUNCTION],
] as const)
  for (const w of list) WORD_LISTS.set(w, (WORD_LISTS.get(w) ?? 0) | bit);
/** A longer word is in no list, and is classified without being copied out of the text. */
const LONGEST_LISTED_WORD = Math.max(...[...WORD_LISTS.keys()].map((w) => w.length));

function classifyWord(s: string, start: number, end: number, next: number): Tok {
  const lists = end - start > LONGEST_LISTED_WORD ? 0 : (WORD_LISTS.get(s.slice(start, end)) ?? 0);
  if ((lists & IS_LOGIC) !== 0) return T_LOGIC;
  if ((lists & IS_UNION) !== 0) return T_UNION;
  if ((lists & IS_STATEMENT) !== 0) return T_STATEMENT;
  const opensParen = s.charCodeAt(next) === 40;
  if ((lists & IS_KEYWORD) !== 0 && (!opensParen || (lists & IS_PAREN_KEYWORD) !== 0)) return T_KEYWORD;
  if (opensParen) return T_FUNC;
  if ((lists & IS_SPACED_FUNCTION) !== 0) {
    let k = next;
    while (k < s.length && isSpace(s.charCodeAt(k))) k++;
    if (s.charCodeAt(k) === 40) return T_FUNC;
  }
  return T_BARE;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** End of the numeric literal at `i`: decimal with fraction and exponent, or 0x/0b. */
function scanNumber(s: string, i: number): number {
  const n = s.length;
  const c1 = s.charCodeAt(i + 1);
  if (s.charCodeAt(i) === 48 && (c1 === 120 || c1 === 98)) {
    let j = i + 2;
    while (j < n && (isDigit(s.charCodeAt(j)) || (s.charCodeAt(j) >= 97 && s.charCodeAt(j) <= 102))) j++;
    return j;
  }
  let j = i;
  while (j < n && (isDigit(s.charCodeAt(j)) || s.charCodeAt(j) === 46)) j++;
  if (
    s.charCodeAt(j) === 101 &&
    (isDigit(s.charCodeAt(j + 1)) || ((s.charCodeAt(j + 1) === 45 || s.charCodeAt(j + 1) === 43) && isDigit(s.charCodeAt(j + 2))))
  ) {
    j += 2;
    while (j < n && isDigit(s.charCodeAt(j))) j++;
  }
  return j;
}

/** Tokenizes `s` (lower-case) into the shared buffer, which is valid until the next call. */
export function tokenize(s: string): TokenBuffer {
  buffer.count = 0;
  const n = s.length;
  let i = 0;
  let versioned = false;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (isSpace(c) || c === 92 /* \ */) {
      i++;
      continue;
    }
    const c1 = i + 1 < n ? s.charCodeAt(i + 1) : 0;
    if (c === 39 || c === 34 || c === 96) {
      push(T_BREAK, i, i + 1, c);
      i++;
    } else if ((c >= 48 && c <= 57) || (c === 46 && c1 >= 48 && c1 <= 57)) {
      const j = scanNumber(s, i);
      let k = j;
      // A digit-led word such as `3pm` or `2fa` is a bare word, not a number.
      while (k < n && isWordChar(s.charCodeAt(k))) k++;
      push(k === j ? T_NUM : T_BARE, i, k, 0);
      i = k;
    } else if (isWordChar(c)) {
      let j = i + 1;
      while (j < n && isWordChar(s.charCodeAt(j))) j++;
      push(classifyWord(s, i, j, j), i, j, 0);
      i = j;
    } else if (c === 64 /* @ */) {
      let j = i + 1;
      if (s.charCodeAt(j) === 64) j++;
      while (j < n && isWordChar(s.charCodeAt(j))) j++;
      push(T_VAR, i, j, 0);
      i = j;
    } else if (c === 47 && c1 === 42 /* slash-star */) {
      if (s.charCodeAt(i + 2) === 33 /* ! */) {
        let j = i + 3;
        while (j < n && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) j++;
        versioned = true;
        i = j;
        continue;
      }
      const close = s.indexOf('*/', i + 2);
      const j = close === -1 ? n : close + 2;
      // A closed block comment followed by more SQL is whitespace (`union/**/select`); only a
      // comment that ends the input terminates the query.
      let k = j;
      while (k < n && isSpace(s.charCodeAt(k))) k++;
      if (close === -1 || k === n) push(T_COMMENT, i, j, 0);
      i = j;
    } else if (c === 42 && c1 === 47 && versioned) {
      versioned = false;
      i += 2;
    } else if ((c === 45 && c1 === 45) || c === 35) {
      const nl = s.indexOf('\n', i);
      const j = nl === -1 ? n : nl;
      push(T_COMMENT, i, j, 0);
      i = j;
    } else if (c === 40) {
      push(T_LPAREN, i, i + 1, 0);
      i++;
    } else if (c === 41) {
      push(T_RPAREN, i, i + 1, 0);
      i++;
    } else if (c === 44) {
      push(T_COMMA, i, i + 1, 0);
      i++;
    } else if (c === 59) {
      push(T_SEMI, i, i + 1, 0);
      i++;
    } else if (c === 46) {
      push(T_DOT, i, i + 1, 0);
      i++;
    } else if ((c === 124 && c1 === 124) || (c === 38 && c1 === 38)) {
      push(T_LOGIC, i, i + 2, 0);
      i += 2;
    } else if (c === 61 || c === 60 || c === 62 || c === 33) {
      let j = i + 1;
      while (j < n && j < i + 3 && (s.charCodeAt(j) === 61 || s.charCodeAt(j) === 62 || s.charCodeAt(j) === 60)) j++;
      // A lone `!` is negation, not a comparison.
      push(T_OP, i, j, c === 33 && j === i + 1 ? OP_ARITH : OP_COMPARE);
      i = j;
    } else if (c === 43 || c === 45 || c === 42 || c === 47 || c === 37 || c === 94 || c === 126 || c === 124 || c === 38) {
      push(T_OP, i, i + 1, OP_ARITH);
      i++;
    } else {
      push(T_OTHER, i, i + 1, 0);
      i++;
    }
  }
  return buffer;
}
