/**
 * Sigma rules to native models. A rule is translated whole or refused: every construct that
 * changes what matches is either supported exactly or named in the refusal, never skipped.
 *
 * Supported: search identifiers (maps = AND, lists of maps = OR, lists of values = OR,
 * keyword lists), the value modifiers that apply to one event (contains, startswith, endswith,
 * all, re with i/m/s, cidr, base64, base64offset, utf16le, utf16be, utf16, wide, windash, exists,
 * gt/gte/lt/lte, fieldref, cased), wildcards `*` `?` with `\` escapes, null values, conditions
 * (and, or, not, parentheses, `1 of`, `all of`, name wildcards, `them`), and correlation rules
 * of type event_count, value_count, temporal and temporal_ordered.
 * Matching follows Sigma: strings compare without regard to case unless `cased`; `re` is
 * case-sensitive unless `re|i`.
 */
import { createHash } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import type { Severity } from '../event/classification.js';
import type { ErrorDetail } from '../event/rejection.js';
import { ALERT_TYPE_PART_LENGTH } from './alert-types.js';
import { mapSigmaField, type FieldMapping } from './field-mapping.js';
import { LIMITS, type Condition, type FieldCondition } from './model.js';
import { SECOND_MS } from '../util/duration.js';
import { readDuration } from '../util/time-text.js';
import { compileGlob, compileTenantRegex, escapeWildcards, wildcardParts, type WildcardPart } from '../util/tenant-pattern.js';

class Refusal extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (field: string, message: string): never => {
  throw new Refusal(field, message);
};

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isMap = (v: unknown): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface SigmaOptions {
  readonly fields?: FieldMapping;
}

/** The native model body a Sigma request translates to (validated afterwards like any native body). */
export type SigmaTranslation =
  { readonly ok: true; readonly body: Record<string, unknown>; readonly rule: string } | { readonly ok: false; readonly errors: ErrorDetail[] };

const MATCH_MODIFIERS = ['contains', 'startswith', 'endswith', 're', 'cidr', 'exists', 'gt', 'gte', 'lt', 'lte', 'fieldref'] as const;
type MatchModifier = (typeof MATCH_MODIFIERS)[number];
const TRANSFORMS = ['base64', 'base64offset', 'utf16le', 'utf16be', 'utf16', 'wide', 'windash'] as const;
type Transform = (typeof TRANSFORMS)[number];
const REFUSED_MODIFIERS: Readonly<Record<string, string>> = {
  expand: 'placeholders (`expand`) need values Vigil does not have',
  minute: 'time-part modifiers are not supported',
  hour: 'time-part modifiers are not supported',
  day: 'time-part modifiers are not supported',
  week: 'time-part modifiers are not supported',
  month: 'time-part modifiers are not supported',
  year: 'time-part modifiers are not supported',
};
const LEVELS: Readonly<Record<string, Severity>> = { informational: 'low', low: 'low', medium: 'medium', high: 'high', critical: 'critical' };
const MAX_EXPANSIONS = 256;

/** Text or bytes while transformation modifiers are applied. */
type Encoded = { readonly text: string } | { readonly bytes: Buffer };

function windashVariants(value: string): string[] {
  // A `-` or `/` that starts an option (at the start or after whitespace) may be written with any dash.
  const dashes = ['-', '/', '\u2013', '\u2014', '\u2015'];
  const positions: number[] = [];
  for (let i = 0; i < value.length; i++) if ((value[i] === '-' || value[i] === '/') && (i === 0 || /\s/.test(value[i - 1] as string))) positions.push(i);
  if (dashes.length ** positions.length > MAX_EXPANSIONS) return [];
  let out = [value];
  for (const pos of positions) out = out.flatMap((v) => dashes.map((d) => v.slice(0, pos) + d + v.slice(pos + 1)));
  return out;
}

/** The three encodings of a value at each alignment in a longer base64 text, without the edge characters that depend on neighbours. */
function base64Offsets(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift, 0x20), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    const lead = [0, 2, 3][shift] as number;
    // The last character of a partial group also carries bits of the next (unknown) byte.
    const trail = padded.length % 3 === 0 ? 0 : 1;
    out.push(encoded.slice(lead, encoded.length - trail));
  }
  return out;
}

const hasWildcard = (pattern: string): boolean => wildcardParts(pattern).some((p) => p.wildcard !== null);

type Part = WildcardPart;
const STAR: Part = { wildcard: '*', text: '' };

/** The pattern text of parts, literal characters escaped so that wildcardParts reads the same parts back. */
const patternOf = (parts: readonly Part[]): string => parts.map((p) => p.wildcard ?? escapeWildcards(p.text)).join('');

/** The simplest native op for a pattern given as parts. */
function stringLeaf(field: string, parts: readonly Part[], ignoreCase: boolean): FieldCondition {
  const ic = ignoreCase ? { ignore_case: true } : {};
  const lit = (i: number) => parts[i]?.wildcard === null;
  const star = (i: number) => parts[i]?.wildcard === '*';
  if (parts.length === 0) return { field, op: 'equals', value: '' };
  if (parts.every((p) => p.wildcard === null)) return { field, op: 'equals', value: parts.map((p) => p.text).join(''), ...ic };
  if (parts.length === 3 && star(0) && lit(1) && star(2)) return { field, op: 'contains', value: parts[1]?.text as string, ...ic };
  if (parts.length === 2 && lit(0) && star(1)) return { field, op: 'startswith', value: parts[0]?.text as string, ...ic };
  if (parts.length === 2 && star(0) && lit(1)) return { field, op: 'endswith', value: parts[1]?.text as string, ...ic };
  return { field, op: 'wildcard', value: patternOf(parts), ...ic };
}

/** Wildcards a modifier adds are wildcards whatever the value ends or starts with (a trailing `\` does not escape them). */
function wrap(parts: readonly Part[], match: MatchModifier | undefined): Part[] {
  const merged =
    match === 'contains' ? [STAR, ...parts, STAR] : match === 'startswith' ? [...parts, STAR] : match === 'endswith' ? [STAR, ...parts] : [...parts];
  // `**` is `*`: collapse so that the common shapes stay plain string ops.
  return merged.filter((p, i) => !(p.wildcard === '*' && merged[i - 1]?.wildcard === '*'));
}

const anyOf = (list: Condition[]): Condition => (list.length === 1 ? (list[0] as Condition) : { any: list });
const allOf = (list: Condition[]): Condition => (list.length === 1 ? (list[0] as Condition) : { all: list });

const isLeaf = (c: Condition): c is FieldCondition => 'op' in c;

/**
 * Alternatives for one field as few conditions as the native ops allow: the values an entry
 * compares equal to become one `in` list, its address ranges one `cidr` list, so that a rule
 * listing hundreds of process names or Microsoft ranges (as SigmaHQ's do) stays within the
 * conditions a model may have. Matches exactly what the alternatives one by one match.
 */
function anyOfMerged(list: Condition[]): Condition {
  const flat = list.flatMap((c) => ('any' in c ? c.any : [c]));
  const lists = new Map<string, FieldCondition[]>();
  const out: (Condition | string)[] = [];
  for (const c of flat) {
    const key = !isLeaf(c)
      ? undefined
      : c.op === 'cidr' && typeof c.value === 'string'
        ? `cidr ${c.field}`
        : c.op === 'equals' && c.value !== null
          ? `in ${c.field} ${c.ignore_case === true}`
          : undefined;
    if (key === undefined) {
      out.push(c);
      continue;
    }
    const group = lists.get(key);
    if (group === undefined) {
      lists.set(key, [c as FieldCondition]);
      out.push(key);
    } else group.push(c as FieldCondition);
  }
  const merged = out.flatMap((c): Condition[] => {
    if (typeof c !== 'string') return [c];
    const group = lists.get(c) as FieldCondition[];
    if (group.length === 1) return group;
    const first = group[0] as FieldCondition;
    const chunks: Condition[] = [];
    for (let i = 0; i < group.length; i += LIMITS.valuesPerList) {
      const values = group.slice(i, i + LIMITS.valuesPerList).map((g) => g.value);
      chunks.push(
        first.op === 'cidr'
          ? { field: first.field, op: 'cidr', value: values }
          : { field: first.field, op: 'in', value: values, ...(first.ignore_case === true ? { ignore_case: true } : {}) },
      );
    }
    return chunks;
  });
  return anyOf(merged);
}

class RuleTranslator {
  constructor(private readonly fields: FieldMapping) {}

  field(name: string, at: string): string {
    if (name.length === 0) refuse(at, 'a modifier needs a field name before it (keyword searches take no modifiers)');
    return mapSigmaField(name, this.fields);
  }

  /** One `field|modifiers: value(s)` entry. */
  entry(key: string, value: Json, at: string): Condition {
    const [name = '', ...mods] = key.split('|');
    let match: MatchModifier | undefined;
    let fieldref = false;
    const transforms: Transform[] = [];
    let all = false;
    let cased = false;
    let flags = '';
    for (const mod of mods) {
      if (REFUSED_MODIFIERS[mod] !== undefined) refuse(at, `modifier \`${mod}\` is not supported: ${REFUSED_MODIFIERS[mod]}`);
      if (mod === 'all') all = true;
      else if (mod === 'cased') cased = true;
      else if (mod === 'i' || mod === 'm' || mod === 's') {
        if (match !== 're') refuse(at, `modifier \`${mod}\` is a flag of \`re\` and must follow it`);
        flags += mod;
      } else if ((TRANSFORMS as readonly string[]).includes(mod)) {
        // `windash` rewrites only the dashes of the value, so it means the same before or after
        // contains/startswith/endswith (SigmaHQ writes `|contains|windash`); the encodings do not.
        const windashAfterMatch = mod === 'windash' && (match === 'contains' || match === 'startswith' || match === 'endswith');
        if (match !== undefined && !windashAfterMatch) refuse(at, `modifier \`${mod}\` must come before \`${match}\``);
        if (windashAfterMatch) transforms.unshift('windash');
        else transforms.push(mod as Transform);
      } else if ((MATCH_MODIFIERS as readonly string[]).includes(mod)) {
        if (mod === 'fieldref') fieldref = true;
        else if (match !== undefined) refuse(at, `modifiers \`${match}\` and \`${mod}\` cannot be combined`);
        else match = mod as MatchModifier;
      } else refuse(at, `unknown modifier \`${mod}\``);
    }
    if (name === '') return this.keywordEntry(mods, value, at);
    const field = this.field(name, at);
    if (fieldref && match !== undefined && !['contains', 'startswith', 'endswith'].includes(match))
      refuse(at, `modifier \`fieldref\` combines only with contains, startswith or endswith, not \`${match}\``);
    if (match === 're' && transforms.length > 0) refuse(at, '`re` takes the pattern as written: no transformation modifier before it');
    if ((match === 'cidr' || match === 'exists' || match === 'gt' || match === 'gte' || match === 'lt' || match === 'lte' || fieldref) && transforms.length > 0)
      refuse(at, `\`${transforms[0] as string}\` cannot be combined with \`${fieldref ? 'fieldref' : (match as string)}\``);

    const values: Json[] = Array.isArray(value) ? value : [value];
    if (values.length === 0) refuse(at, 'an empty list of values matches nothing; remove the entry or give values');
    if (all && values.length < 2) refuse(at, 'modifier `all` needs a list of at least two values (the Sigma specification forbids it on one value)');
    if (values.length > LIMITS.valuesPerList) refuse(at, `at most ${LIMITS.valuesPerList} values per field`);
    const leaves = values.map((v, i) => this.value(field, v, { match, fieldref, transforms, cased, flags, at: Array.isArray(value) ? `${at}[${i}]` : at }));
    return all ? allOf(leaves) : anyOfMerged(leaves);
  }

  value(
    field: string,
    v: Json,
    o: { match: MatchModifier | undefined; fieldref: boolean; transforms: readonly Transform[]; cased: boolean; flags: string; at: string },
  ): Condition {
    const { match, at } = o;
    if (v === null) {
      if (match !== undefined || o.fieldref || o.transforms.length > 0) refuse(at, 'a null value takes no modifiers');
      return { field, op: 'equals', value: null };
    }
    if (isMap(v) || Array.isArray(v)) return refuse(at, 'a value must be a string, number, boolean or null');
    if (o.fieldref) {
      if (typeof v !== 'string') refuse(at, '`fieldref` takes a field name');
      const compare = (match ?? 'equals') as FieldCondition['compare'];
      return {
        field,
        op: 'fieldref',
        value: this.field(v as string, at),
        ...(compare === 'equals' ? {} : { compare }),
        ...(o.cased ? {} : { ignore_case: true }),
      };
    }
    switch (match) {
      case 'exists':
        if (typeof v !== 'boolean') refuse(at, '`exists` takes true or false');
        return { field, op: 'exists', value: v };
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
        if (!Number.isFinite(n)) refuse(at, `\`${match}\` takes a number`);
        return { field, op: match, value: n };
      }
      case 'cidr':
        if (typeof v !== 'string') refuse(at, '`cidr` takes an address range such as 10.0.0.0/8');
        return { field, op: 'cidr', value: v };
      case 're': {
        if (typeof v !== 'string') refuse(at, '`re` takes a regular expression');
        const compiled = compileTenantRegex(v as string, o.flags);
        if (!compiled.ok) refuse(at, `\`re\`: ${compiled.message} (the linear-time engine has no backreferences or lookaround)`);
        return { field, op: 'regex', value: v, ...(o.flags ? { flags: o.flags } : {}) };
      }
      default:
        break;
    }
    if (typeof v !== 'string' && match === undefined && o.transforms.length === 0) return { field, op: 'equals', value: v };
    const raw = String(v);
    let encoded: Encoded[] = [{ text: raw }];
    let encodes = false;
    for (const t of o.transforms) {
      encoded = encoded.flatMap((e): Encoded[] => {
        switch (t) {
          case 'windash':
            if (!('text' in e)) return refuse(at, '`windash` applies to text, before any encoding');
            return windashVariants(e.text).map((text) => ({ text }));
          case 'utf16le':
          case 'wide':
            if (!('text' in e)) return refuse(at, `\`${t}\` applies to text`);
            return [{ bytes: Buffer.from(e.text, 'utf16le') }];
          case 'utf16be':
          case 'utf16': {
            if (!('text' in e)) return refuse(at, `\`${t}\` applies to text`);
            const le = Buffer.from(e.text, 'utf16le');
            if (t === 'utf16') return [{ bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), le]) }];
            const be = Buffer.alloc(le.length);
            for (let i = 0; i + 1 < le.length; i += 2) {
              be[i] = le[i + 1] as number;
              be[i + 1] = le[i] as number;
            }
            return [{ bytes: be }];
          }
          case 'base64':
          case 'base64offset': {
            encodes = true;
            if ('text' in e && hasWildcard(e.text)) return refuse(at, `\`${t}\` of a value with wildcards cannot be matched; write the value without * or ?`);
            const bytes =
              'text' in e
                ? Buffer.from(
                    wildcardParts(e.text)
                      .map((p) => p.text)
                      .join(''),
                    'utf8',
                  )
                : e.bytes;
            return t === 'base64' ? [{ text: bytes.toString('base64') }] : base64Offsets(bytes).map((text) => ({ text }));
          }
        }
      });
    }
    if (encoded.length === 0) refuse(at, `\`windash\` would produce more than ${MAX_EXPANSIONS} variants`);
    if (encoded.length > MAX_EXPANSIONS) refuse(at, `the modifiers produce more than ${MAX_EXPANSIONS} values`);
    const leaves = encoded.map((e) => {
      if (!('text' in e))
        return refuse(at, `\`${o.transforms.find((t) => t.startsWith('utf16') || t === 'wide') as string}\` must be followed by base64 or base64offset`);
      // Encoded text is literal and compared exactly.
      const parts = wrap(encodes ? [{ wildcard: null, text: e.text }] : wildcardParts(e.text), match);
      if (patternOf(parts).length > LIMITS.patternLength) refuse(at, `value longer than ${LIMITS.patternLength} characters`);
      return stringLeaf(field, parts, !o.cased && !encodes) as Condition;
    });
    return anyOf(leaves);
  }

  /** A search identifier's definition. */
  search(def: Json, at: string): Condition {
    if (isMap(def)) {
      const entries = Object.entries(def);
      if (entries.length === 0) refuse(at, 'an empty selection matches everything; refusing it');
      return allOf(entries.map(([k, v]) => this.entry(k, v, `${at}.${k}`)));
    }
    if (Array.isArray(def)) {
      if (def.length === 0) refuse(at, 'an empty list matches nothing');
      if (def.every(isMap)) return anyOf(def.map((m, i) => this.search(m, `${at}[${i}]`)));
      if (def.some((x) => isMap(x) || Array.isArray(x))) refuse(at, 'a list mixes maps and values; use a list of maps or a list of keywords');
      return anyOf(def.map((k, i) => this.keyword(k, `${at}[${i}]`)));
    }
    return this.keyword(def, at);
  }

  /** `'|all': [keywords]`: every keyword must appear somewhere in the event. */
  keywordEntry(mods: readonly string[], value: Json, at: string): Condition {
    for (const mod of mods) if (mod !== 'all') refuse(at, `keyword searches take only the \`all\` modifier, not \`${mod}\``);
    const values = Array.isArray(value) ? value : [value];
    if (values.length === 0) refuse(at, 'an empty list of keywords matches nothing');
    const leaves = values.map((k, i) => this.keyword(k, Array.isArray(value) ? `${at}[${i}]` : at));
    return mods.includes('all') ? allOf(leaves) : anyOf(leaves);
  }

  keyword(k: Json, at: string): Condition {
    if (typeof k !== 'string' && typeof k !== 'number') return refuse(at, 'a keyword must be a string or number');
    const text = String(k);
    if (text.length > LIMITS.patternLength) refuse(at, `keyword longer than ${LIMITS.patternLength} characters`);
    // A keyword matches when any string of the event contains it.
    return stringLeaf('*', wrap(wildcardParts(text), 'contains'), true);
  }

  /** A rule's detection: every search identifier, then the condition over them. */
  detection(detection: Json, at: string): Condition {
    if (!isMap(detection)) return refuse(at, 'detection must be a map of search identifiers and a condition');
    if (detection.timeframe !== undefined) refuse(`${at}.timeframe`, '`timeframe` belongs to Sigma v1 aggregations; use a correlation rule with timespan');
    const searches = new Map<string, Condition>();
    for (const [name, def] of Object.entries(detection)) {
      if (name === 'condition') continue;
      searches.set(name, this.search(def, `${at}.${name}`));
    }
    const cond = detection.condition;
    if (cond === undefined) refuse(`${at}.condition`, 'a rule needs a condition');
    const list = Array.isArray(cond) ? cond : [cond];
    if (list.length === 0) refuse(`${at}.condition`, 'a rule needs a condition');
    return anyOf(
      list.map((c, i) => {
        const where = Array.isArray(cond) ? `${at}.condition[${i}]` : `${at}.condition`;
        if (typeof c !== 'string') return refuse(where, 'a condition is a string expression');
        return new ConditionParser(c, searches, where).parse();
      }),
    );
  }
}

/** Deeper than any condition worth writing; the model built from it must still nest within LIMITS.nestingDepth. */
const CONDITION_DEPTH = 32;

/** `selection and not (filter1 or 1 of filter_*)` */
class ConditionParser {
  private readonly tokens: string[];
  private i = 0;
  /** Parentheses and `not`s open around the current token: bounded, so a hostile condition cannot exhaust the stack. */
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly searches: ReadonlyMap<string, Condition>,
    private readonly at: string,
  ) {
    if (text.includes('|')) refuse(at, `aggregation \`${text.slice(text.indexOf('|')).trim()}\` (Sigma v1) is not supported; use a correlation rule`);
    this.tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
  }

  parse(): Condition {
    if (this.tokens.length === 0) refuse(this.at, 'the condition is empty');
    const c = this.or();
    if (this.i < this.tokens.length) refuse(this.at, `unexpected \`${this.tokens[this.i] as string}\` in condition "${this.text}"`);
    return c;
  }

  private peek(): string | undefined {
    return this.tokens[this.i]?.toLowerCase();
  }

  private or(): Condition {
    const parts = [this.and()];
    while (this.peek() === 'or') {
      this.i++;
      parts.push(this.and());
    }
    return parts.length === 1 ? (parts[0] as Condition) : { any: parts };
  }

  private and(): Condition {
    const parts = [this.not()];
    while (this.peek() === 'and') {
      this.i++;
      parts.push(this.not());
    }
    return parts.length === 1 ? (parts[0] as Condition) : { all: parts };
  }

  private not(): Condition {
    if (this.peek() === 'not') {
      this.i++;
      this.enter();
      const inner = this.not();
      this.depth--;
      return { not: inner };
    }
    return this.primary();
  }

  private enter(): void {
    if (++this.depth > CONDITION_DEPTH) refuse(this.at, `a condition nests parentheses and \`not\` at most ${CONDITION_DEPTH} deep`);
  }

  private primary(): Condition {
    const token = this.tokens[this.i];
    if (token === undefined) return refuse(this.at, `condition "${this.text}" ends too early`);
    const lower = token.toLowerCase();
    if (token === '(') {
      this.i++;
      this.enter();
      const inner = this.or();
      this.depth--;
      if (this.tokens[this.i] !== ')') refuse(this.at, `missing ")" in condition "${this.text}"`);
      this.i++;
      return inner;
    }
    if (token === ')' || lower === 'and' || lower === 'or') return refuse(this.at, `unexpected \`${token}\` in condition "${this.text}"`);
    if (this.tokens[this.i + 1]?.toLowerCase() === 'of') {
      if (lower !== '1' && lower !== 'all' && lower !== 'any') refuse(this.at, `\`${token} of\` is not Sigma condition syntax; use \`1 of\` or \`all of\``);
      const target = this.tokens[this.i + 2];
      if (target === undefined) return refuse(this.at, `\`${token} of\` needs a name pattern or \`them\``);
      this.i += 3;
      const names = this.namesMatching(target);
      const parts = names.map((n) => this.searches.get(n) as Condition);
      return lower === 'all' ? allOf(parts) : anyOf(parts);
    }
    if (lower === 'near') refuse(this.at, '`near` (Sigma v1) is not supported; use a temporal correlation rule');
    this.i++;
    const found = this.searches.get(token);
    if (found === undefined) return refuse(this.at, `condition names \`${token}\`, which is not a search identifier of this rule`);
    return found;
  }

  private namesMatching(target: string): string[] {
    const all = [...this.searches.keys()];
    if (target.toLowerCase() === 'them') {
      const names = all.filter((n) => !n.startsWith('_'));
      if (names.length === 0) refuse(this.at, '`them` names no search identifier');
      return names;
    }
    const compiled = compileGlob(target, { single: true });
    if (!compiled.ok) return refuse(this.at, `\`${target.slice(0, 64)}…\`: ${compiled.message}`);
    const pattern = compiled.pattern;
    const names = all.filter((n) => pattern.test(n));
    if (names.length === 0) refuse(this.at, `\`${target}\` matches no search identifier of this rule`);
    return names;
  }
}

/** A Sigma `timespan` is a duration as everywhere (util/time-text.ts): `5m`, `1h`, `2d`, or seconds. */
function timespanSeconds(v: Json, at: string): number {
  const ms = readDuration(v);
  return ms === undefined ? refuse(at, 'timespan must be a duration: a number and a unit s, m, h, d or w (e.g. 5m), or seconds') : ms / SECOND_MS;
}

/**
 * A rule name as one part of an alert type. A name longer than a part keeps its start and ends in
 * a hash of the whole name, so rules whose titles share a long beginning get different types.
 */
function slug(name: string): string {
  const text =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'rule';
  if (text.length <= ALERT_TYPE_PART_LENGTH) return text;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${text.slice(0, ALERT_TYPE_PART_LENGTH - hash.length - 1).replace(/_+$/, '')}_${hash}`;
}

function outcomeOf(rule: Record<string, Json>): Record<string, unknown> {
  const title = typeof rule.title === 'string' ? rule.title : 'sigma rule';
  const name = typeof rule.name === 'string' ? rule.name : title;
  const level = typeof rule.level === 'string' ? LEVELS[rule.level] : undefined;
  const tags = Array.isArray(rule.tags) ? rule.tags.filter((t): t is string => typeof t === 'string') : [];
  return { alert: `custom.${slug(name)}`, severity: level ?? 'medium', tags };
}

function baseRule(doc: Record<string, Json>, at: string): void {
  for (const key of Object.keys(doc)) {
    if (key === 'action') refuse(`${at}.action`, 'rule collections (`action: global/reset/repeat`) are not supported; send complete rules');
  }
  if (typeof doc.title !== 'string' || doc.title.trim() === '') refuse(`${at}.title`, 'a Sigma rule needs a title');
  if (doc.level !== undefined && (typeof doc.level !== 'string' || LEVELS[doc.level] === undefined))
    refuse(`${at}.level`, `level must be one of ${Object.keys(LEVELS).join(', ')}`);
}

/** Far deeper than a Sigma rule nests, far shallower than what exhausts the YAML parser's stack. */
const YAML_DEPTH = 64;
/** Aliases a document may expand: each expansion copies the anchored node, so a few nested aliases multiply. */
const YAML_ALIASES = 16;

/**
 * How deep the text nests, read before the YAML parser sees it: flow collections (`[` `{`)
 * outside quoted scalars and comments, plus compact block entries (`- - -`) on one line. A quote
 * opens a quoted scalar only where YAML starts one (after indentation, an indicator and a space,
 * `[`, `{` or `,`), so an apostrophe inside a plain scalar hides nothing. The reading can only
 * over-count (a `[` inside a plain scalar counts), which is harmless at this bound.
 */
export function yamlNestingDepth(text: string): number {
  let flow = 0;
  let deepest = 0;
  let quote: '"' | "'" | null = null;
  let scalarStart = true;
  let compact = 0;
  const blank = (c: string | undefined) => c === undefined || c === ' ' || c === '\t' || c === '\n' || c === '\r';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote !== null) {
      if (c === '\\' && quote === '"') i++;
      else if (c === "'" && quote === "'" && text[i + 1] === "'") i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '\n') {
      scalarStart = true;
      compact = 0;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      // Blanks keep whatever the last token allowed.
    } else if ((c === '-' || c === '?' || c === ':') && blank(text[i + 1])) {
      if (c !== ':' && scalarStart) deepest = Math.max(deepest, ++compact + flow);
      scalarStart = true;
    } else if (c === '#' && (i === 0 || blank(text[i - 1]))) {
      const end = text.indexOf('\n', i);
      if (end < 0) break;
      i = end - 1;
    } else if ((c === '"' || c === "'") && scalarStart) {
      quote = c;
      scalarStart = false;
    } else if (c === '[' || c === '{') {
      deepest = Math.max(deepest, ++flow + compact);
      scalarStart = true;
    } else if (c === ']' || c === '}') {
      if (flow > 0) flow--;
      scalarStart = false;
    } else scalarStart = c === ',';
  }
  return deepest;
}

/** The document as plain data; an alias expansion past the bound is a refusal, not a crash. */
function toJsWithinAliasLimit(doc: ReturnType<typeof parseAllDocuments>[number], at: string): Json {
  try {
    return doc.toJS({ maxAliasCount: YAML_ALIASES }) as Json;
  } catch (err) {
    if (err instanceof ReferenceError) return refuse(at, `YAML aliases expand too far (at most ${YAML_ALIASES} per document): ${err.message}`);
    throw err;
  }
}

function parseDocs(input: string | Record<string, unknown>): Record<string, Json>[] {
  if (typeof input !== 'string') return [input as Record<string, Json>];
  if (Buffer.byteLength(input) > LIMITS.sigmaRuleBytes) refuse('rule', `a Sigma request is at most ${LIMITS.sigmaRuleBytes} bytes`);
  const depth = yamlNestingDepth(input);
  if (depth > YAML_DEPTH) refuse('rule', `YAML nests at most ${YAML_DEPTH} collections deep (this text opens ${depth} without closing them)`);
  const docs = parseAllDocuments(input);
  if (!Array.isArray(docs)) return refuse('rule', 'not YAML');
  const out: Record<string, Json>[] = [];
  docs.forEach((d, i) => {
    if (d.errors.length > 0) refuse(`rule[${i}]`, `not valid YAML: ${d.errors[0]?.message ?? 'parse error'}`);
    const js = toJsWithinAliasLimit(d, `rule[${i}]`);
    if (js === null || js === undefined) return;
    if (!isMap(js)) refuse(`rule[${i}]`, 'a Sigma rule is a YAML map');
    out.push(js as Record<string, Json>);
  });
  if (out.length === 0) refuse('rule', 'no Sigma rule found');
  return out;
}

function correlationOf(corr: Record<string, Json>, rules: Record<string, Json>[], t: RuleTranslator, fields: FieldMapping): Record<string, unknown> {
  const at = 'rule.correlation';
  const c = corr.correlation;
  if (!isMap(c)) return refuse(at, 'correlation must be a map');
  for (const key of Object.keys(c))
    if (!['type', 'rules', 'group-by', 'timespan', 'condition', 'generate', 'aliases'].includes(key))
      refuse(`${at}.${key}`, `unknown correlation field \`${key}\``);
  if (c.aliases !== undefined) refuse(`${at}.aliases`, 'field aliases across rules are not supported; map the fields to one Vigil field instead');
  if (c.generate === true)
    refuse(`${at}.generate`, '`generate: true` (alerts from the base rules too) is not supported; save the base rules as models of their own');
  const type = c.type;
  if (type === 'value_sum' || type === 'value_avg' || type === 'value_percentile' || type === 'value_median')
    refuse(`${at}.type`, `correlation type \`${type}\` is not supported (supported: event_count, value_count, temporal, temporal_ordered)`);
  if (type !== 'event_count' && type !== 'value_count' && type !== 'temporal' && type !== 'temporal_ordered')
    refuse(`${at}.type`, 'type must be event_count, value_count, temporal or temporal_ordered');
  const names = typeof c.rules === 'string' ? [c.rules] : c.rules;
  if (!Array.isArray(names) || names.length === 0) return refuse(`${at}.rules`, 'must name the rules it correlates');
  const byName = new Map<string, Record<string, Json>>();
  for (const r of rules) for (const k of [r.name, r.id]) if (typeof k === 'string') byName.set(k, r);
  const conditions = names.map((n, i) => {
    const rule = typeof n === 'string' ? byName.get(n) : undefined;
    if (!rule) return refuse(`${at}.rules[${i}]`, `rule \`${String(n)}\` is not in this request; send the rules it names in the same YAML, separated by ---`);
    if (rule.correlation !== undefined) return refuse(`${at}.rules[${i}]`, 'a correlation of correlations is not supported');
    const idx = rules.indexOf(rule);
    baseRule(rule, `rule[${idx}]`);
    return t.detection(rule.detection ?? null, `rule[${idx}].detection`);
  });
  const groupBy =
    c['group-by'] === undefined
      ? undefined
      : (Array.isArray(c['group-by']) ? c['group-by'] : [c['group-by']]).map((g, i) => {
          if (typeof g !== 'string') return refuse(`${at}.group-by[${i}]`, 'a field name');
          return mapSigmaField(g, fields);
        });
  if (c.timespan === undefined) refuse(`${at}.timespan`, 'a correlation needs a timespan');
  const window = timespanSeconds(c.timespan as Json, `${at}.timespan`);
  const group = groupBy ? { group_by: groupBy } : {};
  if (type === 'temporal' || type === 'temporal_ordered') {
    if (c.condition !== undefined) refuse(`${at}.condition`, `a condition on \`${type}\` is not supported: every named rule must match`);
    if (conditions.length < 2) refuse(`${at}.rules`, `\`${type}\` needs at least two rules`);
    if (conditions.length > LIMITS.sequenceSteps) refuse(`${at}.rules`, `at most ${LIMITS.sequenceSteps} rules in a temporal correlation`);
    return {
      match: { where: conditions[0] },
      sequence: { then: conditions.slice(1).map((where) => ({ where })), ordered: type === 'temporal_ordered', window_seconds: window, ...group },
    };
  }
  const cond = c.condition;
  if (!isMap(cond)) return refuse(`${at}.condition`, 'a count correlation needs a condition such as {gte: 10}');
  let count: number | undefined;
  for (const [op, v] of Object.entries(cond)) {
    if (op === 'field') continue;
    if (op !== 'gte' && op !== 'gt')
      refuse(`${at}.condition.${op}`, `condition \`${op}\` is not supported: a model fires as the count rises, so only gte and gt can be decided on an event`);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) refuse(`${at}.condition.${op}`, 'must be a whole number');
    if (count !== undefined) refuse(`${at}.condition`, 'one of gte or gt');
    count = op === 'gt' ? (v as number) + 1 : (v as number);
  }
  if (count === undefined) return refuse(`${at}.condition`, 'needs gte or gt');
  const distinct = cond.field;
  if (type === 'value_count' && typeof distinct !== 'string') refuse(`${at}.condition.field`, 'value_count counts the distinct values of a field: name it');
  if (type === 'event_count' && distinct !== undefined) refuse(`${at}.condition.field`, 'event_count counts events; use value_count for distinct values');
  return {
    match: { where: anyOf(conditions) },
    threshold: {
      count: Math.max(count, 1),
      ...(type === 'value_count' ? { distinct: mapSigmaField(distinct as string, fields) } : {}),
      ...group,
      window_seconds: window,
    },
  };
}

export interface SigmaOverrides {
  readonly enabled?: unknown;
  readonly event?: unknown;
  readonly outcome?: unknown;
  readonly name?: unknown;
}

/** Translates a Sigma rule (YAML text, or the rule as a JSON object) into a native model body. */
export function translateSigma(input: string | Record<string, unknown>, options: SigmaOptions = {}, overrides: SigmaOverrides = {}): SigmaTranslation {
  const fields = options.fields ?? {};
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  try {
    const docs = parseDocs(input);
    const t = new RuleTranslator(fields);
    const correlations = docs.filter((d) => d.correlation !== undefined);
    let head: Record<string, Json>;
    let body: Record<string, unknown>;
    if (correlations.length > 1)
      return refuse('rule', 'chained correlations (a correlation naming another correlation) are not supported; send one correlation with the rules it names');
    if (correlations.length === 1) {
      head = correlations[0] as Record<string, Json>;
      if (typeof head.title !== 'string') refuse('rule.title', 'a Sigma rule needs a title');
      body = correlationOf(
        head,
        docs.filter((d) => d !== head),
        t,
        fields,
      );
    } else {
      if (docs.length > 1) refuse('rule', 'a request holds one rule, or one correlation with the rules it names');
      head = docs[0] as Record<string, Json>;
      baseRule(head, 'rule');
      body = { match: { where: t.detection(head.detection ?? null, 'rule.detection') } };
    }
    const event = overrides.event ?? '*';
    const match = body.match as Record<string, unknown>;
    match.event = event;
    const sequence = body.sequence as { then: Record<string, unknown>[] } | undefined;
    if (sequence) for (const step of sequence.then) step.event = event;
    const outcome = Object.assign({}, outcomeOf(head), isMap(overrides.outcome as Json) ? (overrides.outcome as Record<string, unknown>) : {});
    const native: Record<string, unknown> = {
      name: overrides.name ?? head.title,
      enabled: overrides.enabled ?? true,
      ...(typeof head.description === 'string' ? { description: head.description.slice(0, LIMITS.descriptionLength) } : {}),
      ...body,
      outcome,
    };
    return { ok: true, body: native, rule: text };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, errors: [{ field: err.field, message: err.message }] };
    throw err;
  }
}
