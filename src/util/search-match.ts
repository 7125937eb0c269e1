/**
 * A search query (search-query.ts) tested on one item in memory, for what no database answers:
 * the live stream's new events and alerts. Linear in the item and the query: wildcards go through
 * the tenant glob matcher, never a regular expression.
 */
import { cidrContains, parseAddress, parseCidr } from './ip.js';
import { SEVERITY_RANK, type Bound, type FieldKind, type FieldTest, type QueryNode } from './search-query.js';
import { compileGlob, escapeWildcards, type WildcardPart } from './tenant-pattern.js';
import { readTime } from './time-text.js';

/** How the item answers a field: a value, several (tags), or undefined when it has none. */
export type FieldValue = (field: string) => unknown;

/** Whether the item passes the query; `words` are the item's lower-cased words of free text. */
export function matchesQuery(node: QueryNode, value: FieldValue, words: () => ReadonlySet<string>): boolean {
  switch (node.kind) {
    case 'and':
      return node.items.every((item) => matchesQuery(item, value, words));
    case 'or':
      return node.items.some((item) => matchesQuery(item, value, words));
    case 'not':
      return !matchesQuery(node.item, value, words);
    case 'text': {
      const have = words();
      return node.words.every((word, i) => (node.prefix && i === node.words.length - 1 ? [...have].some((w) => w.startsWith(word)) : have.has(word)));
    }
    case 'field': {
      const found = value(node.field);
      const values = Array.isArray(found) ? (found as unknown[]) : [found];
      return values.some((v) => v !== undefined && v !== null && passes(node.test, node.fieldKind, v));
    }
  }
}

/** The lower-cased words of texts, split as the full-text index splits them (letters and digits). */
export function wordsOf(texts: readonly unknown[]): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    if (typeof text !== 'string' && typeof text !== 'number') continue;
    for (const word of String(text)
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u))
      if (word !== '') out.add(word);
  }
  return out;
}

function passes(test: FieldTest, kind: FieldKind, v: unknown): boolean {
  switch (test.op) {
    case 'equals':
      return typeof test.value === 'number' ? numberOf(kind, v) === test.value : String(v) === test.value;
    case 'pattern':
      return globOf(test.parts).test(String(v));
    case 'range': {
      const n = numberOf(kind, v);
      return n !== undefined && within(n, test.low, test.high);
    }
    case 'cidr': {
      const address = parseAddress(String(v));
      const block = parseCidr(test.block);
      return address !== undefined && block !== undefined && cidrContains(block, address);
    }
  }
}

function numberOf(kind: FieldKind, v: unknown): number | undefined {
  if (kind === 'severity') return SEVERITY_RANK[String(v)];
  if (kind === 'time') return readTime(v).ms;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function within(n: number, low: Bound | undefined, high: Bound | undefined): boolean {
  if (low !== undefined && (low.inclusive ? n < low.value : n <= low.value)) return false;
  if (high !== undefined && (high.inclusive ? n > high.value : n >= high.value)) return false;
  return true;
}

/** Each pattern of a query is compiled once and kept with it: a stream tests every new item against the same query. */
const globs = new WeakMap<readonly WildcardPart[], { test(text: string): boolean }>();

function globOf(parts: readonly WildcardPart[]): { test(text: string): boolean } {
  let glob = globs.get(parts);
  if (glob === undefined) {
    const compiled = compileGlob(parts.map((p) => p.wildcard ?? escapeWildcards(p.text)).join(''), { single: true, escapes: true });
    glob = compiled.ok ? compiled.pattern : { test: () => false };
    globs.set(parts, glob);
  }
  return glob;
}
