/**
 * Request scanning: SQL injection, XSS, path traversal and command
 * injection in the request path, query, user agent and every string in metadata.
 *
 * Pipeline per string (scan-value.ts): a one-pass prefilter skips strings with no character or
 * word any attack needs; the rest is decoded (decode.ts: URL decoding with overlong UTF-8, %uXXXX,
 * split and lax hex, and HTML entities, repeated to a bounded fixed point; NFKC, null bytes, lower
 * case) and given to the four detectors: sql.ts (token-class rules over sql-tokens.ts, comments removed), xss.ts,
 * traversal.ts and cmdi.ts. Each file documents its rules and its precision policy.
 *
 * Precision policy for metadata free text: scanned with the same detectors and the same 0.5%
 * false-positive budget as request parts. What differs is only what free text legitimately
 * contains: pasted SQL that *starts* with a statement is a snippet (sql.ts), relative imports
 * `../../x` need six levels or a sensitive target (traversal.ts), newlines, markdown backticks and
 * `&&` command chains are not shell separators unless the text shows it was encoded or built by a
 * tool (cmdi.ts). Quoting an attack verbatim ("what does
 * ' or 1=1 mean") is flagged: it *is* the attack string. Math in prose ("1=1 and 2=2") is
 * borderline: a literal tautology right after a value and a logic word is flagged, after a prose
 * word it is not.
 *
 * Work is bounded: each string is analysed up to MAX_SCANNED_LENGTH (64 KB; a payload beyond it
 * is not seen), metadata to MAX_METADATA_DEPTH / MAX_METADATA_NODES / MAX_METADATA_STRINGS, the
 * query to MAX_QUERY_PARAMS, and the event to MAX_SCANNED_PER_EVENT (256 KB) in total; every detector is a linear pass with bounded look-ahead (no regex).
 */
import type { ScanFinding } from '../../event/enrichment.js';
import { CLASS_BITS, MAX_SCANNED_LENGTH, scanValue as scanOne, type ValueKind } from './scan-value.js';

export interface ScanInput {
  readonly path?: string;
  readonly query?: string;
  readonly userAgent?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Nesting below this depth in metadata is not walked. */
export const MAX_METADATA_DEPTH = 8;
/** At most this many metadata strings are scanned per event. */
export const MAX_METADATA_STRINGS = 256;
/** At most this many metadata nodes (objects, arrays, values) are visited per event. */
export const MAX_METADATA_NODES = 4096;
/** Total characters analysed per event across all parts; later strings are skipped once it is spent. */
export const MAX_SCANNED_PER_EVENT = 256 * 1024;
/** At most this many query parameters are scanned per event. */
export const MAX_QUERY_PARAMS = 128;

const NONE: readonly ScanFinding[] = Object.freeze([]);

/** Characters still to analyse in the current event (scanning is synchronous, so one counter suffices). */
let budget = 0;

/** scanOne within the event's budget: a string is analysed up to what is left of it. */
function scanValue(value: string, kind: ValueKind): number {
  if (budget <= 0) return 0;
  const analysed = Math.min(value.length, MAX_SCANNED_LENGTH, budget);
  budget -= analysed;
  return scanOne(analysed < value.length ? value.slice(0, analysed) : value, kind);
}

class Findings {
  list: ScanFinding[] | undefined;

  add(bits: number, location: string): void {
    if (bits === 0) return;
    const list = (this.list ??= []);
    for (const [bit, cls] of CLASS_BITS) {
      if ((bits & bit) !== 0 && !list.some((f) => f.class === cls && f.location === location)) list.push({ class: cls, location });
    }
  }
}

function scanQuery(query: string, out: Findings): void {
  let start = query.charCodeAt(0) === 63 /* ? */ ? 1 : 0;
  let bits = 0;
  for (let params = 0; start < query.length && params < MAX_QUERY_PARAMS; params++) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    const eq = query.indexOf('=', start);
    if (eq !== -1 && eq < end) {
      bits |= scanValue(query.slice(start, eq), 'query') | scanValue(query.slice(eq + 1, end), 'query');
    } else if (end > start) {
      bits |= scanValue(query.slice(start, end), 'query');
    }
    start = end + 1;
  }
  out.add(bits, 'query');
}

interface WalkState {
  strings: number;
  nodes: number;
}

function walkMetadata(value: unknown, location: string, depth: number, state: WalkState, out: Findings): void {
  if (state.strings >= MAX_METADATA_STRINGS || ++state.nodes > MAX_METADATA_NODES) return;
  if (typeof value === 'string') {
    state.strings++;
    out.add(scanValue(value, 'metadata'), location);
    return;
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_METADATA_DEPTH) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && state.nodes < MAX_METADATA_NODES; i++) walkMetadata(value[i], `${location}.${i}`, depth + 1, state, out);
    return;
  }
  for (const key in value) {
    if (state.nodes >= MAX_METADATA_NODES) return;
    if (Object.prototype.hasOwnProperty.call(value, key)) {
      walkMetadata((value as Record<string, unknown>)[key], `${location}.${key}`, depth + 1, state, out);
    }
  }
}

function scanPart(value: string | undefined, kind: ValueKind, out: Findings): void {
  if (value !== undefined && value.length > 0) out.add(scanValue(value, kind), kind);
}

/**
 * Injection classes found in the request parts, after decoding. Each class is reported at most
 * once per location: `path`, `query`, `user_agent` or `metadata.<dotted.path>`.
 */
export function scanRequest(input: ScanInput): readonly ScanFinding[] {
  budget = MAX_SCANNED_PER_EVENT;
  const out = new Findings();
  scanPart(input.path, 'path', out);
  if (input.query !== undefined && input.query.length > 0) scanQuery(input.query, out);
  scanPart(input.userAgent, 'user_agent', out);
  if (input.metadata !== undefined) walkMetadata(input.metadata, 'metadata', 0, { strings: 0, nodes: 0 }, out);
  return out.list ?? NONE;
}
