/** docs/README.md is the index of docs/: it links every page once, and only pages that exist. */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const DOCS = new URL('../../docs/', import.meta.url).pathname;

it('docs/README.md lists every page under docs/, once, each with a line saying what it holds', () => {
  const pages = readdirSync(DOCS, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md') && f !== 'README.md')
    .sort();
  const index = readFileSync(`${DOCS}README.md`, 'utf8');
  const listed = [...index.matchAll(/^- \[[^\]]+\]\(([^)#]+)\): (.*)$/gm)].map((m) => ({ page: m[1] as string, line: m[2] as string }));
  expect(listed.map((l) => l.page).sort()).toEqual(pages);
  for (const { page, line } of listed) expect(line.length, page).toBeGreaterThan(20);
});

it('every page is a guide, a reference or an internals page', () => {
  const loose = readdirSync(DOCS).filter((f) => f.endsWith('.md') && f !== 'README.md');
  expect(loose).toEqual([]);
  const folders = readdirSync(DOCS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  expect(folders).toEqual(['guides', 'images', 'internals', 'reference']);
});
