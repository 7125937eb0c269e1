/**
 * One time parser: src/util/time-text.ts. Date.parse (and a Date built from text) reads whatever
 * date text the engine understands, so a second caller would accept forms the API does not
 * promise and the others refuse.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, nodesOf, sourceFiles, syntaxOf, where } from './sources.js';

const PARSER = 'util/time-text.ts';

/** `Date.parse(…)`, `Date.UTC` aside, and `new Date(text)` with a string argument, as `file:line`. */
export function secondTimeParsers(file: string, text = readFileSync(file, 'utf8')): string[] {
  if (relative(SRC, file) === PARSER) return [];
  const source = syntaxOf(file, text);
  const found: string[] = [];
  for (const node of nodesOf(source)) {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Date' && node.name.text === 'parse')
      found.push(where(source, node));
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Date') {
      const first = node.arguments?.[0];
      if (first !== undefined && (ts.isStringLiteralLike(first) || ts.isTemplateExpression(first))) found.push(where(source, node));
    }
  }
  return found;
}

describe('one time parser', () => {
  it(`src/ reads time text through ${PARSER} only`, () => {
    expect(sourceFiles().flatMap((f) => secondTimeParsers(f))).toEqual([]);
  });

  it('the check finds Date.parse and a Date built from text, and lets a Date built from milliseconds pass', () => {
    const probe = `${SRC}/probe.ts`;
    expect(secondTimeParsers(probe, "const a = Date.parse(text);\nconst b = new Date('2026-01-01');\nconst c = new Date(`${day}T00:00Z`);")).toEqual([
      'probe.ts:1',
      'probe.ts:2',
      'probe.ts:3',
    ]);
    expect(secondTimeParsers(probe, 'const a = new Date(ms);\nconst b = Date.UTC(2026, 0, 1);\nconst c = Date.now();')).toEqual([]);
  });
});
