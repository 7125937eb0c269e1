import type { InjectionClass } from '../../event/enrichment.js';
import { detectCommandInjection } from './cmdi.js';
import { normalise } from './decode.js';
import { mayBeMalicious } from './prefilter.js';
import { detectSqlInjection } from './sql.js';
import { detectTraversal } from './traversal.js';
import { detectXss } from './xss.js';

/** Where a string came from: decides decoding (`+` in queries) and the location policies. */
export type ValueKind = 'path' | 'query' | 'user_agent' | 'metadata';

export const SQLI = 1;
export const XSS = 2;
export const TRAVERSAL = 4;
export const CMDI = 8;

export const CLASS_BITS: readonly (readonly [number, InjectionClass])[] = [
  [SQLI, 'sql_injection'],
  [XSS, 'xss'],
  [TRAVERSAL, 'path_traversal'],
  [CMDI, 'command_injection'],
];

/** Longest prefix of one string that is analysed; the rest is ignored (bounded work per string). */
export const MAX_SCANNED_LENGTH = 64 * 1024;

function clip(raw: string): string {
  return raw.length > MAX_SCANNED_LENGTH ? raw.slice(0, MAX_SCANNED_LENGTH) : raw;
}

/**
 * User agents repeat across requests (a few hundred distinct ones make most traffic), so their
 * results are remembered; the cache is cleared, not evicted, when full.
 */
const USER_AGENT_CACHE_SIZE = 1024;
/** Longer agents are not kept (bounded memory; real browser agents are under 300 chars). */
const MAX_CACHED_USER_AGENT = 512;
const userAgentCache = new Map<string, number>();

/** Classes found in one raw string, as a bit set. The request path is scanned per segment for SQL. */
export function scanValue(input: string, kind: ValueKind): number {
  if (kind !== 'user_agent') return scanUncached(input, kind);
  const cached = userAgentCache.get(input);
  if (cached !== undefined) return cached;
  const found = scanUncached(input, kind);
  if (input.length <= MAX_CACHED_USER_AGENT) {
    if (userAgentCache.size >= USER_AGENT_CACHE_SIZE) userAgentCache.clear();
    userAgentCache.set(input, found);
  }
  return found;
}

function scanUncached(input: string, kind: ValueKind): number {
  const raw = clip(input);
  if (!mayBeMalicious(raw)) return 0;
  const s = normalise(raw, kind === 'query');
  let found = 0;
  if (kind === 'path' ? sqlInPathSegments(raw) : detectSqlInjection(s)) found |= SQLI;
  if (detectXss(s)) found |= XSS;
  if (detectTraversal(s, raw, kind === 'path' ? 'path' : kind === 'query' ? 'query' : 'other')) found |= TRAVERSAL;
  if (detectCommandInjection(s, kind === 'metadata' && !wasUrlEncoded(raw) ? 'text' : 'request')) found |= CMDI;
  return found;
}

/**
 * Free text has real line breaks and spaces; a line break, a space, a tab or a shell
 * metacharacter written as a percent escape (`%0a`, `%20`, `%09`, `%26`, `%7c`, `%3b`, `%60`,
 * `%24`, quotes) was URL-encoded by a client or tool, not typed by a person, so such a string is
 * read with the request rules (line breaks separate commands, `&&` chains count).
 */
function wasUrlEncoded(raw: string): boolean {
  for (let i = raw.indexOf('%'); i !== -1; i = raw.indexOf('%', i + 1)) {
    const a = raw.charCodeAt(i + 1);
    const b = raw.charCodeAt(i + 2) | 0x20;
    if (a === 48 && (b === 97 || b === 100 || b === 57)) return true;
    if (a === 50 && (b === 48 || b === 54 || b === 52 || b === 50 || b === 55)) return true;
    if (a === 55 && b === 99) return true;
    if (a === 51 && b === 98) return true;
    if (a === 54 && b === 48) return true;
  }
  return false;
}

/** Path segments are separate values to the application (`/items/1 or 1=1/edit`). */
function sqlInPathSegments(raw: string): boolean {
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf('/', start);
    if (end === -1) end = raw.length;
    if (end > start) {
      const segment = raw.slice(start, end);
      if (mayBeMalicious(segment) && detectSqlInjection(normalise(segment))) return true;
    }
    start = end + 1;
  }
  return false;
}
