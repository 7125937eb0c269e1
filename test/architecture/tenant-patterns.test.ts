/**
 * Tenant text becomes a matcher in one module only (src/util/tenant-pattern.ts), and nothing in
 * src/ builds a JavaScript RegExp from anything but a literal: a RegExp built from text can
 * backtrack for minutes on the wrong input, and the text may be a tenant's.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, nodesOf, sourceFiles, syntaxOf, where } from './sources.js';

const PATTERN_MODULE = 'util/tenant-pattern.ts';
/** Objects that hold the global RegExp constructor. */
const GLOBALS = new Set(['globalThis', 'window', 'self', 'global']);

const isLiteral = (node: ts.Node | undefined): boolean =>
  node === undefined || ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isRegularExpressionLiteral(node);

const unwrap = (node: ts.Expression): ts.Expression => (ts.isParenthesizedExpression(node) ? unwrap(node.expression) : node);

/** `RegExp`, `(RegExp)`, `globalThis.RegExp` or a regular expression's `.constructor`. */
function isRegExpConstructor(expression: ts.Expression): boolean {
  const e = unwrap(expression);
  if (ts.isIdentifier(e)) return e.text === 'RegExp';
  if (!ts.isPropertyAccessExpression(e)) return false;
  const owner = unwrap(e.expression);
  if (e.name.text === 'RegExp') return ts.isIdentifier(owner) && GLOBALS.has(owner.text);
  return e.name.text === 'constructor' && ts.isRegularExpressionLiteral(owner);
}

/** Where the RegExp constructor is named but not called at once: aliased, passed on, or handed to Reflect.construct. */
function isLooseReference(node: ts.Identifier): boolean {
  if (node.text !== 'RegExp') return false;
  let at: ts.Node = node;
  while (ts.isParenthesizedExpression(at.parent) || (ts.isPropertyAccessExpression(at.parent) && at.parent.name === at)) at = at.parent;
  const parent = at.parent;
  if ((ts.isNewExpression(parent) || ts.isCallExpression(parent)) && parent.expression === at) return false;
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword && parent.right === at) return false;
  // Types (`: RegExp`, `RegExp[]`) and member names (`x.RegExp`) are not the constructor.
  if (ts.isTypeReferenceNode(parent) || ts.isExpressionWithTypeArguments(parent) || ts.isTypeQueryNode(parent)) return false;
  if (
    ts.isPropertyAccessExpression(node.parent) &&
    node.parent.name === node &&
    !(ts.isIdentifier(node.parent.expression) && GLOBALS.has(node.parent.expression.text))
  )
    return false;
  if (ts.isPropertyAssignment(parent) && parent.name === at) return false;
  return !ts.isTypeNode(parent) && !ts.isInterfaceDeclaration(parent);
}

/** `new RegExp(x)` and `RegExp(x)` whose pattern or flags are not literals, and any other use of the constructor, as `file:line`. */
export function dynamicRegExps(file: string, text = readFileSync(file, 'utf8')): string[] {
  const source = syntaxOf(file, text);
  const found: string[] = [];
  for (const node of nodesOf(source)) {
    if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && isRegExpConstructor(node.expression)) {
      const args = node.arguments ?? ts.factory.createNodeArray();
      if (args.length === 0 || !args.every((a) => isLiteral(a))) found.push(where(source, node));
    } else if (ts.isIdentifier(node) && isLooseReference(node)) found.push(where(source, node));
  }
  return found;
}

/** Files importing the regular-expression engine that runs tenant patterns. */
function re2Importers(files: readonly string[]): string[] {
  return files.filter((f) => /from 're2js'/.test(readFileSync(f, 'utf8'))).map((f) => relative(SRC, f));
}

describe('tenant patterns', () => {
  const files = sourceFiles();

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

  it('the check finds the constructor reached another way, and lets its type and instanceof pass', () => {
    const probe = join(SRC, 'probe.ts');
    const planted = [
      'new globalThis.RegExp(text);',
      'new (RegExp)(text);',
      '/a/.constructor(text);',
      'const R = RegExp;',
      'Reflect.construct(RegExp, [text]);',
      'list.map(RegExp);',
    ];
    expect(dynamicRegExps(probe, planted.join('\n'))).toEqual(planted.map((_, i) => `probe.ts:${i + 1}`));
    expect(
      dynamicRegExps(probe, 'const r: RegExp = /x/;\nconst ok = v instanceof RegExp;\nconst l: RegExp[] = [];\nconst o = { RegExp: 1 };\no.RegExp;'),
    ).toEqual([]);
  });

  it(`only ${PATTERN_MODULE} compiles regular expressions on RE2`, () => {
    expect(re2Importers(files)).toEqual([PATTERN_MODULE]);
  });
});
