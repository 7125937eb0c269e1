/**
 * Tenant text becomes a matcher in one module only (src/util/tenant-pattern.ts), and nothing in
 * src/ builds a JavaScript RegExp from anything but a literal: a RegExp built from text can
 * backtrack for minutes on the wrong input, and the text may be a tenant's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');
const PATTERN_MODULE = 'util/tenant-pattern.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

const isLiteral = (node: ts.Node | undefined): boolean =>
  node === undefined || ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isRegularExpressionLiteral(node);

/** `new RegExp(x)` and `RegExp(x)` whose pattern or flags are not literals, as `file:line`. */
export function dynamicRegExps(file: string, text = readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
      const args = node.arguments ?? ts.factory.createNodeArray();
      if (args.length === 0 || !args.every((a) => isLiteral(a))) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${relative(SRC, file)}:${line}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Files importing the regular-expression engine that runs tenant patterns. */
function re2Importers(files: readonly string[]): string[] {
  return files.filter((f) => /from 're2js'/.test(readFileSync(f, 'utf8'))).map((f) => relative(SRC, f));
}

describe('tenant patterns', () => {
  const files = sourceFiles(SRC);

  it('src/ builds no RegExp from non-literal text', () => {
    expect(files.flatMap((f) => dynamicRegExps(f))).toEqual([]);
  });

  it('the check finds a RegExp built from text, and lets a literal one pass', () => {
    const probe = join(SRC, 'probe.ts');
    expect(dynamicRegExps(probe, 'const a = new RegExp(userText);\nconst b = RegExp(`^${x}$`, "i");\nconst c = new RegExp("^a+$", flags);')).toEqual([
      'probe.ts:1',
      'probe.ts:2',
      'probe.ts:3',
    ]);
    expect(dynamicRegExps(probe, 'const a = new RegExp("^[a-z]+$", "i");\nconst b = /x/;\nconst c = new RegExp(/y/);')).toEqual([]);
  });

  it(`only ${PATTERN_MODULE} compiles regular expressions on RE2`, () => {
    expect(re2Importers(files)).toEqual([PATTERN_MODULE]);
  });
});
