import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import maxmind, { type AsnResponse, type Reader } from 'maxmind';
import type { Address } from '../../util/ip.js';
import { IntervalTableBuilder, type IntervalTable } from '../ip/interval-table.js';
import type { AsnInfo } from '../../event/enrichment.js';
import { asnCachePath, readAsnCache, writeAsnCache } from './asn-cache.js';
import { AsnInfoPool, readAsnCsv } from './asn-csv.js';

export interface AsnDatabase {
  lookup(address: Address, text: string): AsnInfo | undefined;
  status(): Record<string, unknown>;
}

/** Files tried, in order, when the ASN path is a folder (the @ip-location-db/asn layout). */
const FOLDER_FILES = [
  ['asn-ipv4-num.csv', 'asn-ipv4.csv'],
  ['asn-ipv6.csv', 'asn-ipv6-num.csv'],
] as const;

/**
 * Opens the ASN data at `location`: a folder of ip-location-db CSVs, a comma-separated list of
 * such CSV files, or an MMDB file with autonomous_system_number (e.g. GeoLite2-ASN).
 * Throws when nothing can be read; the caller turns that into one warning.
 */
export async function openAsnDatabase(location: string, options: { cacheDir?: string } = {}): Promise<AsnDatabase> {
  if (location.endsWith('.mmdb')) return openAsnMmdb(location);
  const files = await csvFiles(location);
  if (files.length === 0) throw new Error(`no ASN CSV files at ${location}`);
  const started = performance.now();
  const cachePath = options.cacheDir ? await asnCachePath(options.cacheDir, files) : undefined;
  const cached = cachePath ? await readAsnCache(cachePath) : undefined;
  if (cached)
    return new CsvAsnDatabase(cached.table, cached.infos, { files, cache: cachePath, fromCache: true, loadMs: Math.round(performance.now() - started) });
  const builder = new IntervalTableBuilder();
  const pool = new AsnInfoPool();
  let malformed = 0;
  for (const file of files) malformed += readAsnCsv(await readFile(file), builder, pool).malformed;
  const table = builder.build();
  let cacheError: string | undefined;
  if (cachePath && options.cacheDir) await writeAsnCache(cachePath, options.cacheDir, table, pool.infos).catch((err: Error) => (cacheError = err.message));
  return new CsvAsnDatabase(table, pool.infos, {
    files,
    malformed,
    overlaps: builder.overlaps,
    fromCache: false,
    ...(cachePath ? { cache: cachePath } : {}),
    ...(cacheError ? { cacheError } : {}),
    loadMs: Math.round(performance.now() - started),
  });
}

async function csvFiles(location: string): Promise<string[]> {
  const paths = location
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (paths.length === 1 && (await stat(paths[0] as string)).isDirectory()) {
    const present = new Set(await readdir(paths[0] as string));
    return FOLDER_FILES.flatMap((choices) => choices.find((f) => present.has(f)) ?? []).map((f) => join(paths[0] as string, f));
  }
  return paths;
}

class CsvAsnDatabase implements AsnDatabase {
  constructor(
    private readonly table: IntervalTable,
    private readonly infos: readonly AsnInfo[],
    private readonly info: Record<string, unknown>,
  ) {}

  lookup(address: Address): AsnInfo | undefined {
    const id = this.table.lookup(address);
    return id < 0 ? undefined : this.infos[id];
  }

  status(): Record<string, unknown> {
    return { source: 'csv', ranges: this.table.size, asns: this.infos.length, ...this.info };
  }
}

async function openAsnMmdb(file: string): Promise<AsnDatabase> {
  const reader: Reader<AsnResponse> = await maxmind.open<AsnResponse>(file);
  return {
    lookup(_address, text) {
      const r = reader.get(text);
      if (!r || typeof r.autonomous_system_number !== 'number') return undefined;
      return r.autonomous_system_organization
        ? { number: r.autonomous_system_number, organization: r.autonomous_system_organization }
        : { number: r.autonomous_system_number };
    },
    status: () => ({ source: 'mmdb', file, databaseType: reader.metadata.databaseType, built: reader.metadata.buildEpoch.toISOString() }),
  };
}
