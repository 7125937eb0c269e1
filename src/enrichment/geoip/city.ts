import { Reader, type Response } from 'maxmind';
import { readWholeFile } from '../../util/read-whole-file.js';
import { GenerationCache } from '../generation-cache.js';
import type { GeoInfo } from '../../event/enrichment.js';

/** Addresses remembered per generation: clients repeat, and a lookup walks the MMDB tree and builds a record. */
const CACHED_ADDRESSES = 20_000;

export interface CityDatabase {
  lookup(ip: string, version: 4 | 6): GeoInfo | undefined;
  status(): Record<string, unknown>;
}

/** The two record layouts we read: ip-location-db (flat) and MaxMind GeoIP2/GeoLite2 City (nested). */
interface CityRecord {
  // ip-location-db dbip-city
  country_code?: string;
  state1?: string;
  city?: string | { names?: Record<string, string> };
  latitude?: number;
  longitude?: number;
  // GeoIP2 City
  country?: { iso_code?: string };
  subdivisions?: { names?: Record<string, string> }[];
  location?: { latitude?: number; longitude?: number; accuracy_radius?: number };
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export function toGeoInfo(r: CityRecord): GeoInfo | undefined {
  const country = r.country_code || r.country?.iso_code || undefined;
  const region = r.state1 || r.subdivisions?.[0]?.names?.en || undefined;
  const city = typeof r.city === 'string' ? r.city || undefined : r.city?.names?.en;
  const latitude = r.latitude ?? r.location?.latitude;
  const longitude = r.longitude ?? r.location?.longitude;
  const radius = r.location?.accuracy_radius;
  if (!country && latitude === undefined) return undefined;
  const geo: { -readonly [K in keyof GeoInfo]: GeoInfo[K] } = {};
  if (country) geo.country = country;
  if (region) geo.region = region;
  if (city) geo.city = city;
  if (typeof latitude === 'number' && typeof longitude === 'number') {
    geo.latitude = round4(latitude);
    geo.longitude = round4(longitude);
  }
  if (typeof radius === 'number') geo.accuracyRadiusKm = radius;
  return Object.freeze(geo);
}

interface OpenReader {
  readonly file: string;
  readonly reader: Reader<Response>;
  readonly ipVersion: number;
}

/**
 * Opens one or more city MMDB files (the shipped DB-IP Lite files are one per IP version; a
 * licensed GeoIP2 City file covers both). An IPv4 address asks IPv4 files first, then IPv6
 * files (which map IPv4); an IPv6 address asks only IPv6 files.
 */
export async function openCityDatabase(files: readonly string[]): Promise<CityDatabase> {
  // Read together, each in one call (maxmind.open reads in 512 KiB pieces). Decoded records are
  // memoised by offset as maxmind.open does (10,000), so addresses of one network share a decode.
  const readers: OpenReader[] = await Promise.all(
    files.map(async (file) => {
      const records = new GenerationCache<string | number, NonNullable<unknown>>(10_000);
      const reader = new Reader<Response>(await readWholeFile(file), {
        cache: { get: (offset) => records.peek(offset), set: (offset, record) => records.put(offset, record) },
      });
      return { file, reader, ipVersion: reader.metadata.ipVersion };
    }),
  );
  const v4 = [...readers.filter((r) => r.ipVersion === 4), ...readers.filter((r) => r.ipVersion === 6)].map((r) => r.reader);
  const v6 = readers.filter((r) => r.ipVersion === 6).map((r) => r.reader);
  const ask = (list: readonly Reader<Response>[], ip: string): GeoInfo | undefined => {
    for (const reader of list) {
      const record = reader.get(ip) as CityRecord | null;
      if (record) return toGeoInfo(record);
    }
    return undefined;
  };
  // `null`: looked up, not in the database (a Map cannot tell a cached undefined from a miss).
  const cache = new GenerationCache<string, GeoInfo | null>(CACHED_ADDRESSES);
  const lookupV4 = (ip: string) => ask(v4, ip) ?? null;
  const lookupV6 = (ip: string) => ask(v6, ip) ?? null;
  return {
    lookup: (ip, version) => (version === 4 ? cache.get(ip, lookupV4) : cache.get(ip, lookupV6)) ?? undefined,
    status: () => ({
      files: readers.map((r) => ({
        file: r.file,
        ipVersion: r.ipVersion,
        databaseType: r.reader.metadata.databaseType,
        built: r.reader.metadata.buildEpoch.toISOString(),
      })),
    }),
  };
}
