import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';

/** References a reader of the repository cannot follow: specification files kept elsewhere, numbered sections of them, tracker issues. */
const OUTSIDE = /interface\.md|design\.md|shared\/spec|\bdesign( §)? ?[0-9]+(\.[0-9]+)?\b|\bissue #?[0-9]+\b|\binterface [0-9]+\.[0-9]/;

/** Absolute paths of the machine the code was written on, and local file URLs: nobody else has them. */
const MACHINE_PATH = /(?<![\w.~:-])(\/work\/|\/home\/[a-z][\w-]*\/(?:src|work|projects?|code)\b|file:\/\/\/(?:work|home|Users|tmp)\/)/;

/** A relative path in quotes, backticks or a Markdown link: `../x`, "./y", (../../z). */
const RELATIVE = /(?:["'`(])(\.{1,2}\/[^"'`)\s#?]*)/g;

/** Markdown link targets that are files: not URLs, not anchors, not e-mail. */
const MD_LINK = /\]\(([^)\s]+)\)/g;

const ROOT = new URL('../../', import.meta.url).pathname;

function repositoryFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(
      (f) =>
        f &&
        !f.startsWith('.ci/') &&
        f !== 'package-lock.json' &&
        !f.endsWith('citations.test.ts') &&
        /\.(ts|tsx|mjs|js|md|json|py|go|php|yaml|yml|txt)$/.test(f),
    );
}

function eachLine(visit: (file: string, line: string, lineNo: number) => void): void {
  for (const file of repositoryFiles()) {
    let text: string;
    try {
      text = readFileSync(ROOT + file, 'utf8');
    } catch {
      continue; // deleted in the work tree
    }
    text.split('\n').forEach((line, i) => visit(file, line, i + 1));
  }
}

/** The prose of a line: all of a Markdown line, the comment of a code line (code may hold paths as data, e.g. traversal payloads). */
const prose = (file: string, line: string) => (file.endsWith('.md') || /^\s*(\/\/|\/?\*|#)/.test(line) ? line : '');

/** True when `target`, read relative to `file`, stays inside the repository. */
const insideRepository = (file: string, target: string) => !relative(ROOT, resolve(ROOT, dirname(file), target)).startsWith('..');

it('no doc, comment or test cites a file or issue outside the repository', () => {
  const hits: string[] = [];
  eachLine((file, line, n) => {
    if (OUTSIDE.test(line)) hits.push(`${file}:${n}: ${line.trim().slice(0, 120)}`);
  });
  expect(hits).toEqual([]);
});

it('no file names a path of the machine it was written on', () => {
  const hits: string[] = [];
  eachLine((file, line, n) => {
    if (MACHINE_PATH.test(line)) hits.push(`${file}:${n}: ${line.trim().slice(0, 120)}`);
  });
  expect(hits).toEqual([]);
});

it('no doc or comment names a relative path outside the repository', () => {
  const hits: string[] = [];
  eachLine((file, line, n) => {
    for (const m of prose(file, line).matchAll(RELATIVE)) {
      if (!insideRepository(file, m[1] as string)) hits.push(`${file}:${n}: ${m[1] as string}`);
    }
  });
  expect(hits).toEqual([]);
});

it('every relative link of the docs names a file of the repository', () => {
  const hits: string[] = [];
  eachLine((file, line, n) => {
    if (!file.endsWith('.md')) return;
    for (const m of line.matchAll(MD_LINK)) {
      const target = (m[1] as string).split('#')[0] as string;
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const full = resolve(ROOT, dirname(file), target);
      if (!insideRepository(file, target) || !existsSync(full)) hits.push(`${file}:${n}: ${m[1] as string}`);
    }
  });
  expect(hits).toEqual([]);
});

it('the checks catch what they are for', () => {
  for (const line of ['see /work/notes/plan.md', 'file:///home/me/x.md', 'in /home/me/src/vigil']) expect(line).toMatch(MACHINE_PATH);
  for (const line of ['reads /etc/passwd', 'home=/home/deploy', '/root/.ssh/authorized_keys', 'file:///etc/passwd', 'C:/work/x'])
    expect(line).not.toMatch(MACHINE_PATH);
  expect(insideRepository('docs/api.md', '../README.md')).toBe(true);
  expect(insideRepository('docs/api.md', '../../outside/notes.md')).toBe(false);
  expect(insideRepository('test/enrichment/request-scan/x.test.ts', '../../../src/event/types.js')).toBe(true);
  expect([...'[spec](../../x.md)'.matchAll(MD_LINK)].map((m) => m[1])).toEqual(['../../x.md']);
  expect(prose('src/a.ts', "  // see '../../../x'")).not.toBe('');
  expect(prose('src/a.ts', "  const payload = '../../etc/passwd';")).toBe('');
});
