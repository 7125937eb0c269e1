/**
 * What kind of network an autonomous system is, from the default lists shipped in
 * network-kinds-data.ts (see its header for the source and licence). A proxy or carrier network
 * egresses many people through a few gateways, so its addresses say little about where a person
 * is; a hosting network is where automation and relays run.
 */
import { formatAddress, parseAddress, TRUNCATED_BITS, truncatedAddress } from '../util/ip.js';
import { HOSTING_ASNS, MOBILE_ASNS, PROXY_ASNS } from './network-kinds-data.js';

export type NetworkKind = 'hosting' | 'proxy' | 'mobile';

function unpack(packed: string): ReadonlySet<number> {
  const out = new Set<number>();
  let asn = 0;
  for (const gap of packed.split(' ')) {
    asn += parseInt(gap, 36);
    out.add(asn);
  }
  return out;
}

let kinds: ReadonlyMap<number, NetworkKind> | undefined;

function table(): ReadonlyMap<number, NetworkKind> {
  if (kinds !== undefined) return kinds;
  const map = new Map<number, NetworkKind>();
  for (const [kind, packed] of [
    ['hosting', HOSTING_ASNS],
    ['mobile', MOBILE_ASNS],
    ['proxy', PROXY_ASNS],
  ] as const)
    for (const asn of unpack(packed)) map.set(asn, kind);
  kinds = map;
  return map;
}

export function networkKind(asn: number | undefined): NetworkKind | undefined {
  return asn === undefined ? undefined : table().get(asn);
}

/**
 * The network an address belongs to for counting: its /24 (IPv4) or /48 (IPv6), as CIDR text.
 * Undefined for text that is not an address.
 */
export function networkPrefix(ip: string): string | undefined {
  const a = parseAddress(ip);
  if (a === undefined) return undefined;
  return `${formatAddress(truncatedAddress(a))}/${TRUNCATED_BITS[a.version]}`;
}
