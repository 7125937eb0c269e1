import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BreachedPasswords } from '../../src/enrichment/password/breached.js';
import { SortedHashFile } from '../../src/enrichment/password/sorted-hash-file.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');
const silent = { warn: () => undefined, info: () => undefined };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vigil-hashes-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('shipped common-password list', () => {
  const breached = BreachedPasswords.open({ logger: silent });
  it('knows common passwords, in either hex case', () => {
    expect(breached.check(sha1('password'))).toBe(true);
    expect(breached.check(sha1('123456').toUpperCase())).toBe(true);
    expect(breached.check(sha1('qwerty'))).toBe(true);
  });
  it('does not know a random password', () => expect(breached.check(sha1('correct horse battery staple 8f3a!'))).toBe(false));
  it('ignores values that are not SHA-1 hex', () => expect(breached.check('not-a-hash')).toBeUndefined());
  it('reports its size without any hash', () => {
    const status = breached.status();
    expect(status.shippedHashes).toBeGreaterThan(10_000);
    expect(JSON.stringify(status)).not.toMatch(/[0-9a-f]{40}/);
  });
});

describe('sorted hash file (searched on disk)', () => {
  const inFile = Array.from({ length: 5000 }, (_, i) => sha1(`leaked-${i}`)).sort();
  const absent = Array.from({ length: 300 }, (_, i) => sha1(`safe-${i}`));

  it.each([
    ['HIBP format, upper case, CRLF', (h: string, i: number) => `${h.toUpperCase()}:${i + 1}\r\n`],
    ['plain lower-case lines', (h: string) => `${h}\n`],
  ])('%s', async (name, format) => {
    const path = join(dir, `${name.replace(/\W+/g, '-')}.txt`);
    await writeFile(path, inFile.map(format).join(''));
    const file = new SortedHashFile(path);
    try {
      for (const h of [inFile[0]!, inFile[1]!, inFile[2500]!, inFile.at(-2)!, inFile.at(-1)!]) expect(file.has(h)).toBe(true);
      for (const h of inFile.filter((_, i) => i % 37 === 0)) expect(file.has(h)).toBe(true);
      for (const h of absent) expect(file.has(h)).toBe(false);
      expect(file.has('0'.repeat(40))).toBe(false);
      expect(file.has('f'.repeat(40))).toBe(false);
    } finally {
      file.close();
    }
  });

  it('finds exactly the listed hashes (property)', async () => {
    const path = join(dir, 'prop.txt');
    await writeFile(path, inFile.map((h) => `${h.toUpperCase()}:7\n`).join(''));
    const file = new SortedHashFile(path);
    const listed = new Set(inFile);
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...inFile), fc.string().map(sha1)), (h) => {
        expect(file.has(h)).toBe(listed.has(h));
      }),
      { numRuns: 2000 },
    );
    file.close();
  });

  it('handles a file without a final newline and an empty file', async () => {
    const path = join(dir, 'nofinal.txt');
    await writeFile(path, inFile.slice(0, 3).join('\n'));
    const file = new SortedHashFile(path);
    expect(inFile.slice(0, 3).every((h) => file.has(h))).toBe(true);
    expect(file.has(inFile[3]!)).toBe(false);
    file.close();
    const empty = join(dir, 'empty.txt');
    await writeFile(empty, '');
    const e = new SortedHashFile(empty);
    expect(e.has(inFile[0]!)).toBe(false);
    e.close();
  });

  it('is used after the shipped list', async () => {
    const path = join(dir, 'extra.txt');
    await writeFile(path, inFile.map((h) => `${h}\n`).join(''));
    const breached = BreachedPasswords.open({ hashFile: path, logger: silent });
    expect(breached.check(inFile[42]!)).toBe(true);
    expect(breached.check(sha1('password'))).toBe(true);
    expect(breached.check(absent[0]!)).toBe(false);
    breached.close();
  });

  it('warns once and goes on with the shipped list when the file is missing', () => {
    const warnings: unknown[] = [];
    const breached = BreachedPasswords.open({ hashFile: join(dir, 'missing.txt'), logger: { warn: (o) => warnings.push(o), info: () => undefined } });
    expect(warnings).toHaveLength(1);
    expect(breached.check(sha1('password'))).toBe(true);
    expect(breached.status().fileError).toBeDefined();
  });
});
