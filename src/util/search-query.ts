/**
 * The search query language of the event and alert lists (`q=`): text in, a tree out, or the
 * first problem with its position. The stores compile the tree to SQL
 * (src/storage/kysely/search-sql.ts); nothing here touches a database.
 *
 *   query   = or
 *   or      = and { "OR" and }
 *   and     = unary { ["AND"] unary }          (terms side by side are ANDed)
 *   unary   = ("NOT" | "-") unary | "(" or ")" | term
 *   term    = field ":" value | word | "quoted phrase"
 *   value   = word | "quoted" | [op] word | ("[" | "{") low "TO" high ("]" | "}")
 *   op      = ">" | ">=" | "<" | "<="
 *
 * A word holds no blank, parenthesis or double quote unless it escapes it with a backslash. In a
 * field's word value `*` matches any characters and `?` one (`\*`, `\?` themselves); a quoted
 * value is literal. A bare word or phrase is free text, matched against the message-like fields
 * by the store's full-text index: its letters and digits, as words in that order, and a word
 * ending in `*` as a prefix. Every bound is checked while reading, so a query costs work in
 * proportion to its length whatever it holds.
 */
import { formatAddress, parseAddress, parseCidr } from './ip.js';
import { wildcardParts, type WildcardPart } from './tenant-pattern.js';
import { readQueryTime } from './time-text.js';
import { DAY_MS } from './duration.js';

export const QUERY_LIMITS = Object.freeze({
  /** Characters of a query. */
  length: 1_000,
  /** Terms (field tests and free-text words or phrases). */
  terms: 32,
  /** Parentheses and negations inside one another. */
  depth: 8,
  /** Wildcards in one value. */
  wildcards: 16,
  /** Free-text words of one term. */
  words: 16,
});

/** How a field's values are read and compared. */
export type FieldKind =
  /** Text: exact, or a wildcard pattern. */
  | 'text'
  /** A number: exact or a range. */
  | 'number'
  /** A time (ISO 8601 or Unix ms): exact, a range; a date alone is that whole UTC day. */
  | 'time'
  /** An address: exact, a wildcard pattern or a CIDR block. */
  | 'ip'
  /** An alert severity: exact or a range in the order low < medium < high < critical. */
  | 'severity';

export const SEVERITY_RANK: Readonly<Record<string, number>> = { low: 1, medium: 2, high: 3, critical: 4 };

/** The fields a list can be searched by; `prefixes` name families of fields such as `metadata.<key>`. */
export interface QueryFields {
  readonly fields: Readonly<Record<string, FieldKind>>;
  readonly prefixes?: Readonly<Record<string, FieldKind>>;
}

export interface Bound {
  readonly value: number;
  readonly inclusive: boolean;
}

export type FieldTest =
  | { readonly op: 'equals'; readonly value: string | number }
  | { readonly op: 'pattern'; readonly parts: readonly WildcardPart[] }
  | { readonly op: 'range'; readonly low?: Bound; readonly high?: Bound }
  | { readonly op: 'cidr'; readonly version: 4 | 6; readonly block: string };

export type QueryNode =
  | { readonly kind: 'and'; readonly items: readonly QueryNode[] }
  | { readonly kind: 'or'; readonly items: readonly QueryNode[] }
  | { readonly kind: 'not'; readonly item: QueryNode }
  /**
   * Free text: `text` as written (the index splits it into words as it splits what it holds),
   * its lower-cased `words`; `prefix`: the last word is a prefix.
   */
  | { readonly kind: 'text'; readonly text: string; readonly words: readonly string[]; readonly prefix: boolean }
  | { readonly kind: 'field'; readonly field: string; readonly fieldKind: FieldKind; readonly test: FieldTest };

export type QueryResult =
  /** `query` is null for a query with no terms (every row). */
  | { readonly ok: true; readonly query: QueryNode | null }
  /** `position`: 1 for the first character. */
  | { readonly ok: false; readonly position: number; readonly message: string };

class QueryError {
  constructor(
    readonly at: number,
    readonly message: string,
  ) {}
}

const FIELD_NAME = /^[a-z_][a-z0-9_]*(?:\.[A-Za-z0-9_-]{1,64}){0,3}$/;
/** A word of free text: letters and digits (what both full-text indexes keep of the text). */
const WORD = /[\p{L}\p{N}]+/gu;

const isBlank = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const stops = (c: string): boolean => isBlank(c) || c === '(' || c === ')' || c === '"';

/** The words of free text as the full-text indexes split it: runs of letters and digits, lower case. */
export function textWords(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).slice(0, QUERY_LIMITS.words + 1);
}

interface Word {
  /** The word with escapes kept (wildcardParts reads them). */
  readonly raw: string;
  readonly at: number;
}

class Parser {
  private i = 0;
  private terms = 0;

  constructor(
    private readonly text: string,
    private readonly fields: QueryFields,
  ) {}

  parse(): QueryNode | null {
    this.skipBlanks();
    if (this.i >= this.text.length) return null;
    const node = this.or(0);
    this.skipBlanks();
    if (this.i < this.text.length) throw new QueryError(this.i, this.text[this.i] === ')' ? 'a ")" without its "("' : 'unexpected text');
    return node;
  }

  private skipBlanks(): void {
    while (this.i < this.text.length && isBlank(this.text[this.i] as string)) this.i++;
  }

  /** The operator keyword at the cursor (followed by a blank, a parenthesis or the end), if any. */
  private keyword(): 'AND' | 'OR' | 'NOT' | undefined {
    for (const k of ['AND', 'OR', 'NOT'] as const) {
      if (this.text.startsWith(k, this.i)) {
        const after = this.text[this.i + k.length];
        if (after === undefined || isBlank(after) || after === '(' || after === ')' || (k === 'NOT' && after === '"')) return k;
      }
    }
    return undefined;
  }

  private or(depth: number): QueryNode {
    const items = [this.and(depth)];
    for (;;) {
      this.skipBlanks();
      if (this.keyword() !== 'OR') break;
      this.i += 2;
      items.push(this.and(depth));
    }
    return items.length === 1 ? (items[0] as QueryNode) : { kind: 'or', items };
  }

  private and(depth: number): QueryNode {
    const items = [this.unary(depth)];
    for (;;) {
      this.skipBlanks();
      const c = this.text[this.i];
      if (c === undefined || c === ')') break;
      const k = this.keyword();
      if (k === 'OR') break;
      if (k === 'AND') this.i += 3;
      items.push(this.unary(depth));
    }
    return items.length === 1 ? (items[0] as QueryNode) : { kind: 'and', items };
  }

  private unary(depth: number): QueryNode {
    this.skipBlanks();
    const at = this.i;
    const c = this.text[this.i];
    if (c === undefined) throw new QueryError(at, 'the query ends where a term is expected');
    const k = this.keyword();
    if (k === 'AND' || k === 'OR') throw new QueryError(at, `${k} needs a term before it`);
    const next = this.text[this.i + 1];
    if (k === 'NOT' || (c === '-' && next !== undefined && !isBlank(next) && next !== ')')) {
      if (depth >= QUERY_LIMITS.depth) throw new QueryError(at, `terms nest deeper than ${QUERY_LIMITS.depth} levels`);
      this.i += k === 'NOT' ? 3 : 1;
      return { kind: 'not', item: this.unary(depth + 1) };
    }
    if (c === '(') {
      if (depth >= QUERY_LIMITS.depth) throw new QueryError(at, `terms nest deeper than ${QUERY_LIMITS.depth} levels`);
      this.i++;
      this.skipBlanks();
      if (this.text[this.i] === ')') throw new QueryError(this.i, 'empty parentheses');
      const inner = this.or(depth + 1);
      this.skipBlanks();
      if (this.text[this.i] !== ')') throw new QueryError(at, 'a "(" without its ")"');
      this.i++;
      return inner;
    }
    if (c === ')') throw new QueryError(at, 'a ")" without its "("');
    return this.term();
  }

  private countTerm(at: number): void {
    if (++this.terms > QUERY_LIMITS.terms) throw new QueryError(at, `more than ${QUERY_LIMITS.terms} terms`);
  }

  /** Reads a quoted string at the cursor (which is on the opening quote); escapes \" and \\. */
  private quoted(): string {
    const at = this.i;
    this.i++;
    let out = '';
    while (this.i < this.text.length) {
      const c = this.text[this.i] as string;
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c === '\\' && this.i + 1 < this.text.length) {
        out += this.text[this.i + 1];
        this.i += 2;
        continue;
      }
      out += c;
      this.i++;
    }
    throw new QueryError(at, 'a quote without its closing quote');
  }

  /** Reads a word: up to a blank, a parenthesis or a quote; a backslash keeps the next character in it. */
  private word(): Word {
    const at = this.i;
    let raw = '';
    while (this.i < this.text.length) {
      const c = this.text[this.i] as string;
      if (c === '\\' && this.i + 1 < this.text.length) {
        raw += c + (this.text[this.i + 1] as string);
        this.i += 2;
        continue;
      }
      if (stops(c)) break;
      raw += c;
      this.i++;
    }
    return { raw, at };
  }

  private term(): QueryNode {
    const at = this.i;
    this.countTerm(at);
    if (this.text[this.i] === '"') return this.freeText(this.quoted(), false, at);
    const w = this.word();
    const colon = unescapedColon(w.raw);
    if (colon < 0) return this.bareText(w);
    const name = w.raw.slice(0, colon);
    const kind = this.kindOf(name);
    if (kind === undefined) throw new QueryError(at, FIELD_NAME.test(name) ? `unknown field ${name}` : 'a field name is letters, digits and _');
    this.i = at + colon + 1;
    return { kind: 'field', field: name, fieldKind: kind, test: this.value(kind, name) };
  }

  private kindOf(name: string): FieldKind | undefined {
    if (!FIELD_NAME.test(name)) return undefined;
    if (Object.hasOwn(this.fields.fields, name)) return this.fields.fields[name];
    const dot = name.indexOf('.');
    if (dot < 0 || this.fields.prefixes === undefined) return undefined;
    const family = name.slice(0, dot);
    return Object.hasOwn(this.fields.prefixes, family) ? this.fields.prefixes[family] : undefined;
  }

  private bareText(w: Word): QueryNode {
    const parts = wildcardParts(w.raw);
    const last = parts[parts.length - 1];
    const prefix = last?.wildcard === '*';
    const wild = parts.filter((p) => p.wildcard !== null).length;
    if (wild > (prefix ? 1 : 0))
      throw new QueryError(w.at, 'free text takes a wildcard only as its last character (a prefix); use a field for other patterns, e.g. actor_id:*dana*');
    return this.freeText(
      parts
        .filter((p) => p.wildcard === null)
        .map((p) => p.text)
        .join(''),
      prefix,
      w.at,
    );
  }

  private freeText(text: string, prefix: boolean, at: number): QueryNode {
    const words = textWords(text);
    if (words.length === 0) throw new QueryError(at, 'free text needs letters or digits');
    if (words.length > QUERY_LIMITS.words) throw new QueryError(at, `a phrase of more than ${QUERY_LIMITS.words} words`);
    return { kind: 'text', text, words, prefix };
  }

  private value(kind: FieldKind, name: string): FieldTest {
    const at = this.i;
    const c = this.text[this.i];
    if (c === undefined || isBlank(c) || c === ')' || c === '(') throw new QueryError(at, `${name}: needs a value`);
    if (c === '"') return this.literal(kind, name, this.quoted(), at);
    if (c === '[' || c === '{') return this.range(kind, name);
    const w = this.word();
    for (const op of ['>=', '<=', '>', '<'] as const) {
      if (w.raw.startsWith(op)) {
        const rest = w.raw.slice(op.length);
        if (rest === '') throw new QueryError(at, `${name}:${op} needs a value`);
        const value = this.scalar(kind, name, unescape(rest), at + op.length);
        const bound = { value, inclusive: op.length === 2 };
        return op[0] === '>' ? { op: 'range', low: bound } : { op: 'range', high: bound };
      }
    }
    const parts = wildcardParts(w.raw);
    const wild = parts.filter((p) => p.wildcard !== null).length;
    if (wild === 0) return this.literal(kind, name, unescape(w.raw), at);
    if (kind !== 'text' && kind !== 'ip') throw new QueryError(at, `${name} takes no wildcards`);
    if (wild > QUERY_LIMITS.wildcards) throw new QueryError(at, `more than ${QUERY_LIMITS.wildcards} wildcards in one value`);
    return { op: 'pattern', parts: mergeStars(parts) };
  }

  /** An exact value; a time that is a date alone means that day, an address with a / a block. */
  private literal(kind: FieldKind, name: string, text: string, at: number): FieldTest {
    if (kind === 'text') return { op: 'equals', value: text };
    if (kind === 'ip') {
      if (text.includes('/')) {
        const cidr = parseCidr(text);
        if (cidr === undefined || cidr.bits === undefined) throw new QueryError(at, `${name}: ${text} is not a CIDR block`);
        return { op: 'cidr', version: cidr.version, block: text };
      }
      const address = parseAddress(text);
      return { op: 'equals', value: address === undefined ? text : formatAddress(address) };
    }
    if (kind === 'time' && /^\d{4}-\d{2}-\d{2}$/.test(text)) {
      const day = this.scalar(kind, name, text, at);
      return { op: 'range', low: { value: day, inclusive: true }, high: { value: day + DAY_MS, inclusive: false } };
    }
    const value = this.scalar(kind, name, text, at);
    return { op: 'equals', value };
  }

  /** A comparable value: a number, a time in ms, a severity's rank. */
  private scalar(kind: FieldKind, name: string, text: string, at: number): number {
    if (kind === 'number') {
      if (!/^-?\d{1,15}(?:\.\d{1,6})?$/.test(text)) throw new QueryError(at, `${name}: ${text} is not a number`);
      return Number(text);
    }
    if (kind === 'time') {
      const reading = readQueryTime(text);
      if (reading.ms === undefined) throw new QueryError(at, `${name}: ${text} is not a time (ISO 8601 or Unix milliseconds)`);
      return reading.ms;
    }
    if (kind === 'severity') {
      const rank = Object.hasOwn(SEVERITY_RANK, text) ? SEVERITY_RANK[text] : undefined;
      if (rank === undefined) throw new QueryError(at, `${name}: ${text} is not low, medium, high or critical`);
      return rank;
    }
    throw new QueryError(at, `${name} takes no range`);
  }

  /** `[low TO high]` inclusive, `{low TO high}` exclusive (the two kinds mix); `*` leaves a side open. */
  private range(kind: FieldKind, name: string): FieldTest {
    const at = this.i;
    const open = this.text[this.i] as string;
    this.i++;
    this.skipBlanks();
    const low = this.word();
    this.skipBlanks();
    if (!this.text.startsWith('TO', this.i)) throw new QueryError(this.i, `${name}: a range is [low TO high]`);
    this.i += 2;
    this.skipBlanks();
    const highAt = this.i;
    let high = '';
    while (this.i < this.text.length && !isBlank(this.text[this.i] as string) && this.text[this.i] !== ']' && this.text[this.i] !== '}')
      high += this.text[this.i++];
    this.skipBlanks();
    const close = this.text[this.i];
    if (close !== ']' && close !== '}') throw new QueryError(at, `${name}: a range without its closing ] or }`);
    this.i++;
    if (low.raw === '' || high === '') throw new QueryError(at, `${name}: a range is [low TO high]`);
    const lowBound = low.raw === '*' ? undefined : { value: this.scalar(kind, name, unescape(low.raw), low.at), inclusive: open === '[' };
    const highBound = high === '*' ? undefined : { value: this.scalar(kind, name, high, highAt), inclusive: close === ']' };
    return { op: 'range', ...(lowBound ? { low: lowBound } : {}), ...(highBound ? { high: highBound } : {}) };
  }
}

/** Where the field name ends: the first colon not escaped, or -1. */
function unescapedColon(raw: string): number {
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '\\') i++;
    else if (raw[i] === ':') return i > 0 ? i : -1;
  }
  return -1;
}

/** A word's text with its escapes read. */
function unescape(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '\\' && i + 1 < raw.length) i++;
    out += raw[i] as string;
  }
  return out;
}

/** `**` matches what `*` does: one star each. */
function mergeStars(parts: readonly WildcardPart[]): WildcardPart[] {
  const out: WildcardPart[] = [];
  for (const p of parts) if (!(p.wildcard === '*' && out[out.length - 1]?.wildcard === '*')) out.push(p);
  return out;
}

/**
 * Reads a query against the fields a list has. Never throws: a query that cannot be read is
 * answered with the position (1 for the first character) of its first problem.
 */
export function parseQuery(text: string, fields: QueryFields): QueryResult {
  if (text.length > QUERY_LIMITS.length)
    return { ok: false, position: QUERY_LIMITS.length + 1, message: `a query is at most ${QUERY_LIMITS.length} characters` };
  const nul = text.indexOf('\u0000');
  if (nul >= 0) return { ok: false, position: nul + 1, message: 'a query holds no NUL character' };
  try {
    return { ok: true, query: new Parser(text, fields).parse() };
  } catch (err) {
    if (err instanceof QueryError) return { ok: false, position: Math.min(err.at, text.length) + 1, message: err.message };
    throw err;
  }
}

/** The fields of the event list. */
export const EVENT_FIELDS: QueryFields = {
  fields: {
    id: 'text',
    type: 'text',
    event_id: 'text',
    actor_id: 'text',
    email: 'text',
    ip: 'ip',
    country: 'text',
    asn: 'number',
    risk: 'number',
    tag: 'text',
    host: 'text',
    session_id: 'text',
    device_id: 'text',
    user_agent: 'text',
    'request.method': 'text',
    'request.path': 'text',
    'request.query': 'text',
    occurred_at: 'time',
    received_at: 'time',
  },
  prefixes: { metadata: 'text' },
};

/** The fields of the alert list. */
export const ALERT_FIELDS: QueryFields = {
  fields: {
    id: 'text',
    type: 'text',
    severity: 'severity',
    status: 'text',
    subject: 'text',
    actor_id: 'text',
    assignee: 'text',
    count: 'number',
    first_seen: 'time',
    last_seen: 'time',
  },
};
