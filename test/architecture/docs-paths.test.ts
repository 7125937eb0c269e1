/**
 * Every repository path a page of the documentation names in backticks exists: `src/…`, `test/…`,
 * `bench/…`, `docs/…`, `dashboard/…`, `clients/…`, `agent/…`. A placeholder (`<name>`) or a glob
 * (`*`) checks the folder before it; build output (`dist`) is not in the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const PATH = /`((?:src|test|bench|docs|dashboard|clients|agent)\/[^`\s]*)`/g;

const PAGES = [
  'README.md',
  'bench/README.md',
  'test/README.md',
  ...readdirSync(`${ROOT}docs`, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
].filter((page) => existsSync(ROOT + page));

/** The part of a named path that must exist: no line number or anchor, nothing from a placeholder on. */
export function checkedPart(named: string): string | undefined {
  const path = named.replace(/[:#].*$/, '').replace(/[.,;)]+$/, '');
  const segments = path.split('/');
  if (segments.includes('dist')) return undefined;
  const open = segments.findIndex((s) => s.includes('<') || s.includes('*'));
  return open < 0 ? path : segments.slice(0, open).join('/');
}

it('every page of the documentation names only paths that exist', () => {
  const missing: string[] = [];
  for (const page of PAGES) {
    readFileSync(ROOT + page, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(PATH)) {
          const part = checkedPart(m[1] as string);
          if (part !== undefined && !existsSync(ROOT + part)) missing.push(`${page}:${i + 1}: ${m[1] as string}`);
        }
      });
  }
  expect(missing).toEqual([]);
});

it('the architecture page names only paths that exist, in backticks or not (its pictures too)', () => {
  const missing: string[] = [];
  readFileSync(`${ROOT}docs/internals/architecture.md`, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      for (const m of line.matchAll(/(?<![\w/.-])((?:src|test|bench)\/[\w./<>*-]*[\w>*])/g)) {
        const part = checkedPart(m[1] as string);
        if (part !== undefined && !existsSync(ROOT + part)) missing.push(`architecture.md:${i + 1}: ${m[1] as string}`);
      }
    });
  expect(missing).toEqual([]);
});

it('the architecture page is among them, and names paths', () => {
  expect(PAGES).toContain('docs/internals/architecture.md');
  const named = [...readFileSync(`${ROOT}docs/internals/architecture.md`, 'utf8').matchAll(PATH)];
  expect(named.length).toBeGreaterThan(50);
});

it('reads what a path names', () => {
  expect(checkedPart('src/app.ts:120')).toBe('src/app.ts');
  expect(checkedPart('src/detection/detectors/<name>.ts')).toBe('src/detection/detectors');
  expect(checkedPart('test/fixtures/scan-corpus/benign-*.txt')).toBe('test/fixtures/scan-corpus');
  expect(checkedPart('dashboard/dist')).toBeUndefined();
});
