import { createHash } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { readWholeFile } from '../../util/read-whole-file.js';
import { join } from 'node:path';
import { IntervalTable, type IntervalArrays } from '../ip/interval-table.js';
import type { AsnInfo } from '../../event/enrichment.js';

/**
 * The compiled ASN table in a binary file, so that a restart reads typed arrays instead of
 * parsing the CSV. Keyed by the source files' paths, sizes and modification times: a new
 * data package (or edited CSV) makes a new key. Any problem reading it means "no cache".
 */
const MAGIC = 'VIGIL-ASN-2\n';
const ARRAYS = ['v4Start', 'v4End', 'v4Value', 'v6Start', 'v6End', 'v6Value'] as const;

export interface CachedAsn {
  readonly table: IntervalTable;
  readonly infos: readonly AsnInfo[];
}

export async function asnCachePath(cacheDir: string, files: readonly string[]): Promise<string> {
  const stats = await Promise.all(files.map(async (f) => ({ f, s: await stat(f) })));
  const key = createHash('sha1')
    .update(JSON.stringify([MAGIC, stats.map(({ f, s }) => [f, s.size, s.mtimeMs])]))
    .digest('hex')
    .slice(0, 20);
  return join(cacheDir, `vigil-asn-${key}.bin`);
}

export async function readAsnCache(path: string): Promise<CachedAsn | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readWholeFile(path);
  } catch {
    return undefined;
  }
  try {
    if (bytes.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
    const headerLength = bytes.readUInt32LE(MAGIC.length);
    let offset = MAGIC.length + 4;
    const header = JSON.parse(bytes.toString('utf8', offset, offset + headerLength)) as { infos: [number, string?][]; lengths: number[] };
    offset += headerLength;
    offset += (4 - (offset % 4)) % 4;
    const arrays: Record<string, Uint32Array | Int32Array> = {};
    ARRAYS.forEach((name, i) => {
      const length = header.lengths[i] as number;
      const copy = bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + length * 4);
      if (copy.byteLength !== length * 4) throw new Error('truncated');
      arrays[name] = name.endsWith('Value') ? new Int32Array(copy) : new Uint32Array(copy);
      offset += length * 4;
    });
    const infos = header.infos.map(([number, organization]) => Object.freeze(organization ? { number, organization } : { number }));
    return { table: IntervalTable.fromArrays(arrays as unknown as IntervalArrays), infos };
  } catch {
    return undefined;
  }
}

export async function writeAsnCache(path: string, cacheDir: string, table: IntervalTable, infos: readonly AsnInfo[]): Promise<void> {
  const arrays = table.arrays();
  const header = Buffer.from(
    JSON.stringify({ infos: infos.map((i) => (i.organization ? [i.number, i.organization] : [i.number])), lengths: ARRAYS.map((n) => arrays[n].length) }),
  );
  const prefix = MAGIC.length + 4 + header.length;
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  const parts = [
    Buffer.from(MAGIC, 'latin1'),
    length,
    header,
    Buffer.alloc((4 - (prefix % 4)) % 4),
    ...ARRAYS.map((n) => Buffer.from(arrays[n].buffer, arrays[n].byteOffset, arrays[n].byteLength)),
  ];
  await mkdir(cacheDir, { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, Buffer.concat(parts));
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}
