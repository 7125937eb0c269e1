/**
 * A reference to a section of a doc (`docs/internals/performance.md, "Node 20's slow paths"`, or
 * `architecture.md, "Memory state bound"` from another page) names a section the page has: a
 * heading (or the part of one before its colon), or a paragraph's bold lead (`**Memory state bound.**`).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const PAGES = readdirSync(`${ROOT}docs`, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'));

/** A page's text with comment markers and line breaks folded into single spaces. */
const folded = (text: string) => text.replace(/\n\s*(?:\*|\/\/|#)?\s*/g, ' ').replaceAll("\\'", "'");

/** `page.md, "Section"` and `page.md, "Section"; "Other"` pairs in a text; the page as written. */
export function sectionReferences(text: string): { page: string; section: string }[] {
  const found: { page: string; section: string }[] = [];
  for (const m of folded(text).matchAll(/([\w./-]+\.md)\)?,\s+((?:"[^"]+"(?:\s+and\s+|;\s+|,\s+)?)+)/g)) {
    for (const s of (m[2] as string).matchAll(/"([^"]+)"/g)) found.push({ page: m[1] as string, section: s[1] as string });
  }
  return found;
}

/** The sections of a page: its headings and its paragraphs' bold leads. */
export function sectionsOf(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const m of markdown.matchAll(/^#+\s+(.+)$/gm)) names.add((m[1] as string).trim());
  for (const m of markdown.matchAll(/\*\*([^*]+?)\.?\*\*/g)) names.add((m[1] as string).trim());
  return names;
}

const pageNamed = (written: string): string | undefined => {
  const exact = written.replace(/^docs\//, '');
  return PAGES.find((p) => p === exact) ?? PAGES.find((p) => basename(p) === basename(written));
};

it('every section a doc, comment or test cites by name exists in the page it names', () => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => /\.(md|ts|tsx|js|mjs)$/.test(f) && !f.startsWith('test/fixtures/') && !f.endsWith('section-references.test.ts'));
  const missing: string[] = [];
  let checked = 0;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(ROOT + file, 'utf8');
    } catch {
      continue; // deleted in the work tree
    }
    for (const { page, section } of sectionReferences(text)) {
      const target = pageNamed(page);
      if (target === undefined) continue; // a page of another project (README.md of a package, …)
      checked++;
      const sections = [...sectionsOf(readFileSync(`${ROOT}docs/${target}`, 'utf8'))];
      if (!sections.some((s) => s === section || s.startsWith(`${section}:`))) missing.push(`${file}: ${page}, "${section}"`);
    }
  }
  expect(missing).toEqual([]);
  expect(checked).toBeGreaterThan(5);
});

it('reads references across comment lines, and sections from headings and bold leads', () => {
  expect(sectionReferences('bounds the WAL (docs/internals/performance.md,\n * "Checkpoints off the commit path"). Message')).toEqual([
    { page: 'docs/internals/performance.md', section: 'Checkpoints off the commit path' },
  ]);
  expect(sectionReferences('([threat-models.md](../guides/threat-models.md), "Limits" and "Cost")')).toEqual([
    { page: '../guides/threat-models.md', section: 'Limits' },
    { page: '../guides/threat-models.md', section: 'Cost' },
  ]);
  expect([...sectionsOf("# A\n\n## Node 20's slow paths\n\n**Memory state bound.** text")]).toEqual(['A', "Node 20's slow paths", 'Memory state bound']);
});
