/**
 * Every regular expression literal in src/, run against long adversarial strings built from the
 * characters its own pattern mentions (single-character runs and two-character alternations,
 * each ending in a character that forces a failed match). A pattern with catastrophic
 * backtracking runs for minutes or forever on 20,000 characters; linear ones finish in
 * microseconds, so a pattern that makes no progress for seconds is reported by name. The request scanner has its own adversarial suite
 * (test/enrichment/request-scan/adversarial.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');
/**
 * No progress for this long means a pattern is backtracking. The slowest linear pattern here takes
 * well under a second on a loaded machine; a backtracking one does not finish in minutes.
 */
const STALL_MS = 30_000;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function regexLiterals(file: string): { where: string; regex: RegExp }[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { where: string; regex: RegExp }[] = [];
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(source);
      const slash = literal.lastIndexOf('/');
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      // Without the g/y flags a test does not depend on lastIndex.
      const flags = literal.slice(slash + 1).replace(/[gy]/g, '');
      found.push({ where: `${file.slice(SRC.length + 1)}:${line} ${literal}`, regex: new RegExp(literal.slice(1, slash), flags) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Resolves with the inputs tried per pattern, or names the first pattern still running after `stallMs`. */
function runAll(patterns: readonly RegExp[], stallMs: number): Promise<{ tried: number[]; stuck?: number }> {
  const worker = new Worker(join(import.meta.dirname, 'regex-worker.mjs'), { workerData: patterns.map((r) => ({ source: r.source, flags: r.flags })) });
  const tried: number[] = [];
  return new Promise((resolve, reject) => {
    let timer = setTimeout(() => stop(), stallMs);
    const stop = () => {
      void worker.terminate();
      resolve({ tried, stuck: tried.length });
    };
    worker.on('message', (n: number) => {
      tried.push(n);
      clearTimeout(timer);
      if (tried.length === patterns.length) {
        void worker.terminate();
        resolve({ tried });
      } else timer = setTimeout(stop, stallMs);
    });
    worker.on('error', reject);
  });
}

const literals = sourceFiles(SRC).flatMap(regexLiterals);

describe('regular expressions stay linear on long adversarial input', () => {
  it(`finds the literals in src/ (${literals.length})`, () => {
    expect(literals.length).toBeGreaterThan(25);
  });

  it('every literal finishes its adversarial inputs', async () => {
    const { tried, stuck } = await runAll(
      literals.map((l) => l.regex),
      STALL_MS,
    );
    expect(stuck === undefined ? 'none' : literals[stuck]?.where).toBe('none');
    expect(tried.every((n) => n > 50)).toBe(true);
  }, 120_000);

  it('the harness catches a backtracking pattern', async () => {
    const { stuck } = await runAll([/^[a-z]+$/, /^(\w+\s?)+$/], 2_000);
    expect(stuck).toBe(1);
  }, 120_000);
});
