import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';

const root = new URL('../../src/', import.meta.url).pathname;

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

/**
 * The modules a file loads when it runs: its static imports and re-exports, less those that
 * only name types (`import type`, or every name marked `type`), which TypeScript erases.
 * Dynamic `import()` loads later, after both modules finished evaluating, so it is left out.
 */
export function runtimeImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^'";]*?)\s*from\s+'(\.[^']+)'|^import\s+'(\.[^']+)'/gm)) {
    if (m[5] !== undefined) {
      found.push(m[5]);
      continue;
    }
    if (m[2] !== undefined) continue;
    const names = /\{([^}]*)\}/.exec(m[3] as string);
    const outside = (m[3] as string).replace(/\{[^}]*\}/, '').replace(/[\s,]/g, '');
    const onlyTypes =
      names !== null &&
      outside === '' &&
      names[1]!
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .every((s) => s.startsWith('type '));
    if (!onlyTypes) found.push(m[4] as string);
  }
  return found;
}

/** The runtime import graph of src/: file -> files it loads (paths relative to src/). */
function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of sources(root)) {
    const from = relative(root, file);
    const targets = runtimeImports(readFileSync(file, 'utf8')).map((spec) => relative(root, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'));
    edges.set(from, targets);
  }
  return edges;
}

/** One cycle per strongly connected group of modules, as a path that returns to its start. */
function cycles(edges: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      const s = state.get(next);
      if (s === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

it('reads runtime imports and skips type-only ones', () => {
  const text = [
    "import { a } from './a.js';",
    "import type { B } from './b.js';",
    "import { type C, type D } from './c.js';",
    "import { type E, f } from './e.js';",
    "import G from './g.js';",
    "export { h } from './h.js';",
    "export type { I } from './i.js';",
    "import './j.js';",
    "const k = await import('./k.js');",
  ].join('\n');
  expect(runtimeImports(text)).toEqual(['./a.js', './e.js', './g.js', './h.js', './j.js']);
});

it('no module of src/ is in a runtime import cycle', () => {
  const edges = graph();
  expect(edges.size).toBeGreaterThan(100);
  expect(cycles(edges).map((cycle) => cycle.join(' -> '))).toEqual([]);
});

it('the cycle finder finds a cycle', () => {
  const edges = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  expect(cycles(edges)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
});
