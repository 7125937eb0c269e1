/**
 * The one rule that splits every detection corpus (attack and benign) into a tuning part and a
 * held-out part: a line is held out when the first byte of the SHA-256 of its text (UTF-8, as it
 * stands in the file) is below 77, about 30% of the lines. Detectors are tuned on the tuning part
 * only; the held-out part measures how well they hold on payloads nobody tuned them on. The rule
 * depends on the line alone, so adding or reordering lines moves no other line between parts.
 */
import { createHash } from 'node:crypto';

export type Part = 'tuning' | 'held-out';
export const PARTS: readonly Part[] = ['tuning', 'held-out'];

/** Lines whose hash's first byte is below this are held out: 77 / 256 ≈ 30%. */
export const HELD_OUT_BELOW = 77;

export function partOf(line: string): Part {
  return (createHash('sha256').update(line, 'utf8').digest()[0] ?? 0) < HELD_OUT_BELOW ? 'held-out' : 'tuning';
}
