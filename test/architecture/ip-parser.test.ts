/**
 * One IP parser: src/util/ip.ts. Any other reader of address text reads some forms differently
 * (ipaddr.js takes `010.0.0.1` for 8.0.0.1 and accepts `10.1`; net.isIP has its own rules), and a
 * range would then hold an address for one part of the service and not for another. The one
 * other IP library allowed is ipaddr.js in the webhook guard, and only to classify an address
 * util/ip.ts has already parsed, handed over as bytes.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, nodesOf, sourceFiles, syntaxOf, where } from './sources.js';

const PARSER = 'util/ip.ts';
const CLASSIFIER = 'webhooks/ssrf.ts';
/** What the classifier may call on ipaddr.js: building an address from bytes, never from text. */
const CLASSIFIER_CALLS = new Set(['fromByteArray']);

const IP_LIBRARIES = new Set([
  'ipaddr.js',
  'ip',
  'ip-address',
  'ip6addr',
  'ip-cidr',
  'ip-regex',
  'is-ip',
  'cidr-tools',
  'cidr-regex',
  'netmask',
  'range_check',
  'ip-range-check',
]);
const NET_MODULES = new Set(['net', 'node:net']);
/** The address readers of node:net. */
const NET_PARSERS = new Set(['isIP', 'isIPv4', 'isIPv6', 'BlockList', 'SocketAddress']);

/** A regular expression shaped like a dotted quad: three digit-then-dot steps, a repeated one, or an octet range. */
const DOTTED_QUAD = [/(?:(?:\\d|\[0-9\])[^\\]{0,8}\\\.[^]*){3}/, /\\\.\)?\{3\}/, /25\[0-5\]/];
const NUMBER_READERS = new Set(['Number', 'parseInt', 'parseFloat']);

const moduleOf = (node: ts.Node): string | undefined => {
  if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
    return node.moduleSpecifier.text;
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression))
    return node.moduleReference.expression.text;
  if (
    ts.isCallExpression(node) &&
    (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
  ) {
    const first = node.arguments[0];
    return first !== undefined && ts.isStringLiteralLike(first) ? first.text : undefined;
  }
  return undefined;
};

/** The names an ipaddr.js import binds in a file. */
function ipaddrBindings(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const node of nodesOf(source)) {
    if (!ts.isImportDeclaration(node) || moduleOf(node) !== 'ipaddr.js' || node.importClause === undefined) continue;
    const clause = node.importClause;
    if (clause.name) names.add(clause.name.text);
    if (clause.namedBindings && ts.isNamespaceImport(clause.namedBindings)) names.add(clause.namedBindings.name.text);
    if (clause.namedBindings && ts.isNamedImports(clause.namedBindings)) for (const e of clause.namedBindings.elements) names.add(e.name.text);
  }
  return names;
}

const isSplitOnDot = (node: ts.Node): node is ts.CallExpression => {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression) || node.expression.name.text !== 'split') return false;
  const arg = node.arguments[0];
  return arg !== undefined && ((ts.isStringLiteralLike(arg) && arg.text === '.') || (ts.isRegularExpressionLiteral(arg) && /^\/\\\.\+?\/$/.test(arg.text)));
};

/** The statement (or class member, or whole arrow body) an expression belongs to. */
function statementOf(node: ts.Node): ts.Node {
  let at = node;
  while (at.parent && !ts.isStatement(at) && !ts.isClassElement(at) && !ts.isSourceFile(at.parent)) at = at.parent;
  return at;
}

/** Each place in a file that reads IP address text other than through util/ip.ts, as `file:line what`. */
export function secondIpParsers(file: string, text = readFileSync(file, 'utf8')): string[] {
  const path = relative(SRC, file);
  if (path === PARSER) return [];
  const source = syntaxOf(file, text);
  const found: string[] = [];
  const flag = (node: ts.Node, what: string) => found.push(`${where(source, node)} ${what}`);
  const ipaddr = path === CLASSIFIER ? ipaddrBindings(source) : new Set<string>();
  for (const node of nodesOf(source)) {
    const spec = moduleOf(node);
    if (spec !== undefined && IP_LIBRARIES.has(spec) && !(spec === 'ipaddr.js' && path === CLASSIFIER && ts.isImportDeclaration(node)))
      flag(node, `imports ${spec}`);
    if (spec !== undefined && NET_MODULES.has(spec) && ts.isImportDeclaration(node)) {
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        for (const e of bindings.elements)
          if (NET_PARSERS.has((e.propertyName ?? e.name).text)) flag(e, `imports ${(e.propertyName ?? e.name).text} from ${spec}`);
    }
    if (ts.isPropertyAccessExpression(node) && NET_PARSERS.has(node.name.text)) flag(node, `uses .${node.name.text}`);
    if (
      ts.isIdentifier(node) &&
      ipaddr.has(node.text) &&
      !ts.isImportClause(node.parent) &&
      !ts.isNamespaceImport(node.parent) &&
      !ts.isImportSpecifier(node.parent)
    ) {
      const member = ts.isPropertyAccessExpression(node.parent) && node.parent.expression === node ? node.parent.name.text : undefined;
      if (member === undefined || !CLASSIFIER_CALLS.has(member)) flag(node, `uses ipaddr.js${member ? `.${member}` : ''} beyond classifying parsed bytes`);
    }
    if (ts.isRegularExpressionLiteral(node) || (ts.isStringLiteralLike(node) && /\\/.test(node.text))) {
      const pattern = ts.isRegularExpressionLiteral(node) ? node.text : node.text;
      if (DOTTED_QUAD.some((shape) => shape.test(pattern))) flag(node, 'matches dotted quads');
    }
    if (isSplitOnDot(node)) {
      const statement = statementOf(node);
      if (nodesOf(statement).some((n) => ts.isIdentifier(n) && NUMBER_READERS.has(n.text))) flag(node, 'splits on "." and reads numbers');
    }
  }
  return found;
}

describe('one IP parser', () => {
  it(`src/ reads IP addresses through ${PARSER} only`, () => {
    expect(sourceFiles().flatMap((f) => secondIpParsers(f))).toEqual([]);
  });

  it('the check finds a second parser of each kind', () => {
    const probe = (name: string, text: string) => secondIpParsers(`${SRC}/${name}`, text);
    expect(probe('probe.ts', "import ipaddr from 'ipaddr.js';\nconst a = ipaddr.parse(x);")).toEqual(['probe.ts:1 imports ipaddr.js']);
    expect(probe('probe.ts', "const ipaddr = require('ipaddr.js');\nconst m = await import('ip-address');")).toEqual([
      'probe.ts:1 imports ipaddr.js',
      'probe.ts:2 imports ip-address',
    ]);
    expect(probe('probe.ts', "import { isIP, BlockList as B } from 'node:net';\nimport net from 'net';\nnet.isIPv6(x);")).toEqual([
      'probe.ts:1 imports isIP from node:net',
      'probe.ts:1 imports BlockList from node:net',
      'probe.ts:3 uses .isIPv6',
    ]);
    expect(probe('probe.ts', 'const v4 = /^(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})$/;\nconst w = /^(?:\\d+\\.){3}\\d+$/;')).toEqual([
      'probe.ts:1 matches dotted quads',
      'probe.ts:2 matches dotted quads',
    ]);
    expect(probe('probe.ts', "const parts = ip.split('.').map(Number);\nconst b = parseInt(ip.split(/\\./)[0], 10);")).toEqual([
      'probe.ts:1 splits on "." and reads numbers',
      'probe.ts:2 splits on "." and reads numbers',
    ]);
    // The classifier may build an address from bytes, and nothing else.
    expect(probe(CLASSIFIER, "import ipaddr from 'ipaddr.js';\nipaddr.fromByteArray(b).range();\nipaddr.process(text);")).toEqual([
      `${CLASSIFIER}:3 uses ipaddr.js.process beyond classifying parsed bytes`,
    ]);
  });

  it('the check lets through what is not an address parser', () => {
    const probe = (text: string) => secondIpParsers(`${SRC}/probe.ts`, text);
    expect(probe("import type { Socket } from 'node:net';\nconst v = /^\\d+\\.\\d+\\.\\d+$/;\nconst [head] = path.split('.');")).toEqual([]);
    expect(probe("import ipaddr from 'ipaddr.js';")).toEqual(['probe.ts:1 imports ipaddr.js']);
  });
});
