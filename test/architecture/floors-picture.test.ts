/** The picture of the floors in docs/internals/architecture.md is the list test/architecture/layers.ts enforces. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { FLOORS } from './layers.js';

const ARCHITECTURE = new URL('../../docs/internals/architecture.md', import.meta.url);

/** The floors the picture shows, highest first: each line's names before its description. */
export function floorsInPicture(markdown: string): string[][] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Floors\n'));
  if (section === undefined) throw new Error('architecture.md has no "Floors" section');
  const block = /^```\n([\s\S]*?)^```$/m.exec(section);
  if (block === null) throw new Error('the "Floors" section has no picture');
  return (block[1] as string)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) =>
      (line.split(/\s{2,}/)[0] as string)
        .split(',')
        .map((name) => name.trim().replace(/\/$/, ''))
        .sort(),
    );
}

it('the picture of the floors names the folders of each floor of FLOORS, highest first', () => {
  const enforced = [...FLOORS].reverse().map((floor) => [...floor].sort());
  expect(floorsInPicture(readFileSync(ARCHITECTURE, 'utf8'))).toEqual(enforced);
});

it('reads a picture line by line', () => {
  const markdown = '# A\n\n## Floors\n\ntext\n\n```\nmain.ts, cli/      start\nutil/, event/      ids\n```\n\n## Next\n';
  expect(floorsInPicture(markdown)).toEqual([
    ['cli', 'main.ts'],
    ['event', 'util'],
  ]);
});
