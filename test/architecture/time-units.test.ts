/**
 * One set of time units: src/util/duration.ts. An hour or a day written out in milliseconds
 * elsewhere is a second copy that a reader has to recognise and a change can miss.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, nodesOf, sourceFiles, syntaxOf, where } from './sources.js';

const UNITS = 'util/duration.ts';
/** An hour and a day in milliseconds: numbers that mean nothing else in this code. */
const UNIT_MILLISECONDS = new Set([3_600_000, 86_400_000]);

/** Numeric literals equal to an hour or a day in milliseconds outside the units module, as `file:line`. */
export function writtenOutUnits(file: string, text = readFileSync(file, 'utf8')): string[] {
  if (relative(SRC, file) === UNITS) return [];
  const source = syntaxOf(file, text);
  return nodesOf(source)
    .filter((node) => ts.isNumericLiteral(node) && UNIT_MILLISECONDS.has(Number(node.text.replaceAll('_', ''))))
    .map((node) => where(source, node));
}

describe('one set of time units', () => {
  it('finds an hour or a day written in milliseconds', () => {
    const file = `${SRC}/ops/example.ts`;
    expect(writtenOutUnits(file, 'const a = 3_600_000;\nconst b = 7 * 86400000;\nconst c = 60;')).toEqual(['ops/example.ts:1', 'ops/example.ts:2']);
  });

  it('src/ takes them from util/duration.ts', () => {
    expect(sourceFiles().flatMap((file) => writtenOutUnits(file))).toEqual([]);
  });
});
