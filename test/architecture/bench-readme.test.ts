/** bench/README.md lists every script of bench/, and only scripts that exist. */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const BENCH = new URL('../../bench/', import.meta.url).pathname;

it('bench/README.md names every script of bench/ and no other', () => {
  const scripts = readdirSync(BENCH)
    .filter((f) => f.endsWith('.ts'))
    .sort();
  const readme = readFileSync(`${BENCH}README.md`, 'utf8');
  const named = [...new Set([...readme.matchAll(/`(?:[^`]*\s)?bench\/([\w-]+\.ts)\b/g)].map((m) => m[1] as string))].sort();
  expect(named).toEqual(scripts);
});

it('every npm script that runs a benchmark names a script that exists', () => {
  const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  const files = readdirSync(BENCH);
  const named = Object.values(scripts).flatMap((command) => [...command.matchAll(/\bbench\/([\w-]+\.ts)\b/g)].map((m) => m[1] as string));
  expect(named.length).toBeGreaterThan(3);
  for (const file of named) expect(files).toContain(file);
});
