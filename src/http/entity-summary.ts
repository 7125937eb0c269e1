import { DEVICE_KEYS, textOf } from '../detection/metadata.js';
import { networkKind } from '../detection/network-kinds.js';
import type { Enrichment } from '../event/enrichment.js';
import type { EntityActivity, EntityRef, EventRow } from '../storage/types.js';
import { siteNetwork } from '../util/ip.js';

/** Values listed per distribution (countries, devices, …), most frequent first. */
export const TOP_VALUES = 10;

export interface ValueCount {
  readonly value: string;
  readonly count: number;
}

type Doc = Readonly<Record<string, unknown>>;
const objectAt = (doc: Doc, key: string): Doc | undefined => {
  const v = doc[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Doc) : undefined;
};
const textAt = (doc: Doc | undefined, key: string): string | undefined => {
  const v = doc?.[key];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

/** The TOP_VALUES most frequent values, ties by value. */
function top(values: Iterable<string | null | undefined>): ValueCount[] {
  const counts = new Map<string, number>();
  for (const v of values) if (v !== null && v !== undefined && v !== '') counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, TOP_VALUES);
}

/** A device: the id the sender gave (metadata device_id and its spellings), else the browser and system of the user agent. */
function deviceOf(row: EventRow): string | undefined {
  const metadata = objectAt(row.doc, 'metadata');
  return (metadata && textOf(metadata, DEVICE_KEYS)) ?? textAt(objectAt(objectAt(row.doc, 'enrichment') ?? {}, 'user_agent'), 'family');
}

/** The distributions of an entity's sampled events: the lists its page shows beside the counts. */
export function distributions(entity: EntityRef, sample: readonly EventRow[]) {
  const docs = sample.map((r) => r.doc);
  const enrichment = (d: Doc) => objectAt(d, 'enrichment') ?? {};
  return {
    countries: top(docs.map((d) => textAt(objectAt(enrichment(d), 'geo'), 'country'))),
    devices: top(sample.map(deviceOf)),
    user_agents: top(docs.map((d) => textAt(d, 'user_agent'))),
    ...(entity.kind === 'ip' ? {} : { addresses: top(sample.map((r) => r.ip)) }),
    ...(entity.kind === 'actor' ? {} : { actors: top(sample.map((r) => r.actorId)) }),
    hosts: top(docs.map((d) => textAt(d, 'host'))),
    sessions: top(docs.map((d) => textAt(d, 'session_id'))),
  };
}

/** Counts, times and risk per bucket of an entity's events. */
export function activityView(activity: EntityActivity) {
  const b = activity.buckets;
  const events = b.reduce((n, x) => n + x.count, 0);
  return {
    first_seen: b.length === 0 ? null : new Date(Math.min(...b.map((x) => x.firstSeen))).toISOString(),
    last_seen: b.length === 0 ? null : new Date(Math.max(...b.map((x) => x.lastSeen))).toISOString(),
    events,
    max_risk: b.reduce((m, x) => Math.max(m, x.maxRisk), 0),
    risk_over_time: b.map((x) => ({ at: new Date(x.at).toISOString(), max: x.maxRisk, avg: Math.round(x.avgRisk * 10) / 10, count: x.count })),
  };
}

interface StoredThreat {
  readonly tor_exit?: boolean;
  readonly blocklists?: readonly string[];
  readonly hosting_asn?: boolean;
}

/** Feed names an address is on: its blocklists, `tor` for a Tor exit, `hosting_asn` for a listed hosting network. */
function feedsOf(threat: { torExit?: boolean; blocklists?: readonly string[]; hostingAsn?: boolean } | undefined): string[] {
  if (threat === undefined) return [];
  return [...(threat.torExit ? ['tor'] : []), ...(threat.blocklists ?? []), ...(threat.hostingAsn ? ['hosting_asn'] : [])];
}

/**
 * What is known of an address's network: the enrichment's answer now (`lookup`), and where it has
 * nothing (no GeoIP, ASN or feed data configured), what the newest stored event from the address
 * was enriched with. `network` is its /24 (IPv4) or /64 (IPv6); `kind` the network's kind
 * (hosting, proxy, mobile) from its ASN, or the address's scope when it is not public.
 */
export function networkView(ip: string, lookedUp: Enrichment | undefined, sample: readonly EventRow[]) {
  const newest = sample[0];
  const stored = newest === undefined ? undefined : objectAt(newest.doc, 'enrichment');
  const storedAsn = objectAt(stored ?? {}, 'asn');
  const storedThreat = objectAt(stored ?? {}, 'threat') as StoredThreat | undefined;
  const asnNumber = lookedUp?.asn?.number ?? (typeof storedAsn?.number === 'number' ? storedAsn.number : undefined);
  const threat =
    lookedUp?.threat ?? (storedThreat && { torExit: storedThreat.tor_exit, blocklists: storedThreat.blocklists, hostingAsn: storedThreat.hosting_asn });
  const scope = lookedUp?.network?.scope ?? textAt(objectAt(stored ?? {}, 'network'), 'scope');
  const source = lookedUp?.asn !== undefined || lookedUp?.geo !== undefined || lookedUp?.threat !== undefined ? 'lookup' : stored ? 'events' : null;
  return {
    asn: asnNumber ?? null,
    org: lookedUp?.asn?.organization ?? textAt(storedAsn, 'organization') ?? null,
    country: lookedUp?.geo?.country ?? textAt(objectAt(stored ?? {}, 'geo'), 'country') ?? null,
    network: siteNetwork(ip) ?? null,
    feeds: feedsOf(threat),
    kind: networkKind(asnNumber) ?? (threat?.hostingAsn ? 'hosting' : scope !== undefined && scope !== 'public' ? scope : null),
    source,
  };
}
