import type { ScanFinding } from '../types.js';
import { CLASS_BITS, scanValue, type ValueKind } from './scan-value.js';

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
/** At most this many query parameters are scanned per event. */
export const MAX_QUERY_PARAMS = 128;

const NONE: readonly ScanFinding[] = Object.freeze([]);

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
  const out = new Findings();
  scanPart(input.path, 'path', out);
  if (input.query !== undefined && input.query.length > 0) scanQuery(input.query, out);
  scanPart(input.userAgent, 'user_agent', out);
  if (input.metadata !== undefined) walkMetadata(input.metadata, 'metadata', 0, { strings: 0, nodes: 0 }, out);
  return out.list ?? NONE;
}
