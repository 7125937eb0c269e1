import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWholeFile } from '../../src/util/read-whole-file.js';

describe('readWholeFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vigil-read-'));

  it('returns every byte of files of any size, empty included', async () => {
    for (const size of [0, 1, 512 * 1024 + 3, 5 * 1024 * 1024]) {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
      const file = join(dir, `f${size}`);
      writeFileSync(file, bytes);
      expect((await readWholeFile(file)).equals(bytes)).toBe(true);
    }
  });

  it('rejects for a missing file', async () => {
    await expect(readWholeFile(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
