/** What the enrich stage adds. Each part is absent when its enricher had nothing to say. */
export interface GeoInfo {
  readonly country?: string;
  readonly region?: string;
  readonly city?: string;
  readonly latitude?: number;
  readonly longitude?: number;
  /** Kilometres; absent when the database gives none. */
  readonly accuracyRadiusKm?: number;
}

export interface AsnInfo {
  readonly number: number;
  readonly organization?: string;
}

/** Classification of the address itself, before any database lookup. */
export type AddressScope = 'public' | 'private' | 'loopback' | 'link_local' | 'cgnat' | 'documentation' | 'reserved' | 'multicast' | 'unspecified';

export interface NetworkInfo {
  readonly ip: string;
  readonly version: 4 | 6;
  readonly scope: AddressScope;
}

export interface ThreatIntel {
  readonly torExit: boolean;
  /** Names of the blocklist feeds that list the address. */
  readonly blocklists: readonly string[];
  readonly hostingAsn: boolean;
}

export interface UserAgentInfo {
  readonly browser?: string;
  readonly browserVersion?: string;
  readonly os?: string;
  readonly deviceType?: string;
  /** A stable family string (browser + OS) used by device-novelty detectors. */
  readonly family: string;
  readonly automated: boolean;
  /** Name of the offensive scanner tool (sqlmap, nikto, ...), if the agent is one. */
  readonly scanner?: string;
}

export interface EmailInfo {
  readonly domain: string;
  readonly normalized: string;
  readonly disposable: boolean;
}

export type InjectionClass = 'sql_injection' | 'xss' | 'path_traversal' | 'command_injection';

export interface ScanFinding {
  readonly class: InjectionClass;
  /** Where it was found: `path`, `query`, `user_agent` or `metadata.<path>`. */
  readonly location: string;
}

export interface Enrichment {
  readonly network?: NetworkInfo;
  readonly geo?: GeoInfo;
  readonly asn?: AsnInfo;
  readonly threat?: ThreatIntel;
  readonly userAgent?: UserAgentInfo;
  readonly email?: EmailInfo;
  readonly breachedPassword?: boolean;
  readonly scan?: readonly ScanFinding[];
}
