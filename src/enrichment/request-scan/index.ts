import type { ScanFinding } from '../types.js';

export interface ScanInput {
  readonly path?: string;
  readonly query?: string;
  readonly userAgent?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** PLACEHOLDER until the scanner lands: injection classes found in the request parts, after decoding. */
export function scanRequest(input: ScanInput): readonly ScanFinding[] {
  void input;
  return [];
}
