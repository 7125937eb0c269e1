import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

/** References a reader of the repository cannot follow: specification files kept elsewhere, numbered sections of them, tracker issues. */
const OUTSIDE = /interface\.md|design\.md|shared\/spec|\bdesign( §)? ?[0-9]+(\.[0-9]+)?\b|\bissue #?[0-9]+\b|\binterface [0-9]+\.[0-9]/;

it('no doc, comment or test cites a file or issue outside the repository', () => {
  const root = new URL('../../', import.meta.url).pathname;
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter(
      (f) =>
        f &&
        !f.startsWith('.ci/') &&
        f !== 'package-lock.json' &&
        !f.endsWith('citations.test.ts') &&
        /\.(ts|tsx|mjs|js|md|json|py|go|php|yaml|yml|txt)$/.test(f),
    );
  const hits: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(root + file, 'utf8');
    } catch {
      continue; // deleted in the work tree
    }
    text.split('\n').forEach((line, i) => {
      if (OUTSIDE.test(line)) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
    });
  }
  expect(hits).toEqual([]);
});
