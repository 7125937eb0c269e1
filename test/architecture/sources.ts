/** The TypeScript sources of src/ and their syntax trees, for the architecture tests that read code. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const SRC = join(import.meta.dirname, '../../src');

export function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

export const syntaxOf = (file: string, text = readFileSync(file, 'utf8')): ts.SourceFile => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

/** `path:line` of a node, the path relative to src/. */
export const where = (source: ts.SourceFile, node: ts.Node): string =>
  `${relative(SRC, source.fileName)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;

/** Every node of a tree, depth first. */
export function nodesOf(node: ts.Node): ts.Node[] {
  const all: ts.Node[] = [];
  const visit = (n: ts.Node): void => {
    all.push(n);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return all;
}
