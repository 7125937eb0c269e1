import type { AddressScope } from '../../event/enrichment.js';
import type { Address } from '../../util/ip.js';

type V4Block = readonly [first: number, bits: number, scope: AddressScope];

// RFC 6890 special-purpose IPv4 blocks; more specific first.
const V4_BLOCKS: readonly V4Block[] = [
  [0x00000000, 32, 'unspecified'],
  [0x00000000, 8, 'reserved'], // "this network"
  [0x0a000000, 8, 'private'],
  [0x64400000, 10, 'cgnat'], // 100.64.0.0/10
  [0x7f000000, 8, 'loopback'],
  [0xa9fe0000, 16, 'link_local'], // 169.254.0.0/16
  [0xac100000, 12, 'private'], // 172.16.0.0/12
  [0xc0000000, 24, 'reserved'], // 192.0.0.0/24 IETF protocol assignments
  [0xc0000200, 24, 'documentation'], // 192.0.2.0/24 TEST-NET-1
  [0xc0586300, 24, 'reserved'], // 192.88.99.0/24 6to4 relay anycast
  [0xc0a80000, 16, 'private'], // 192.168.0.0/16
  [0xc6120000, 15, 'reserved'], // 198.18.0.0/15 benchmarking
  [0xc6336400, 24, 'documentation'], // 198.51.100.0/24 TEST-NET-2
  [0xcb007100, 24, 'documentation'], // 203.0.113.0/24 TEST-NET-3
  [0xe0000000, 4, 'multicast'],
  [0xf0000000, 4, 'reserved'], // 240.0.0.0/4 and the broadcast address
];

function v4Scope(value: number): AddressScope {
  for (const [first, bits, scope] of V4_BLOCKS) {
    const shift = 32 - bits;
    if (shift === 32 ? true : value >>> shift === first >>> shift) return scope;
  }
  return 'public';
}

function v6Scope(a: Address): AddressScope {
  const { w0, w1, w2, w3 } = a;
  if (w0 === 0 && w1 === 0 && w2 === 0) return w3 === 0 ? 'unspecified' : w3 === 1 ? 'loopback' : 'reserved';
  const top16 = w0 >>> 16;
  if (top16 >>> 13 !== 1) {
    // Outside 2000::/3, global unicast.
    if (top16 >>> 9 === 0x7e) return 'private'; // fc00::/7 unique local
    if (top16 >>> 6 === 0x3fa) return 'link_local'; // fe80::/10
    if (top16 >>> 8 === 0xff) return 'multicast';
    return 'reserved';
  }
  if (w0 === 0x20010db8) return 'documentation'; // 2001:db8::/32
  if (w0 >>> 12 === 0x3fff0) return 'documentation'; // 3fff::/20 (RFC 9637)
  if (w0 === 0x20010002 && w1 >>> 16 === 0) return 'reserved'; // 2001:2::/48 benchmarking
  if (w0 >>> 4 === 0x2001001) return 'reserved'; // 2001:10::/28 ORCHID
  return 'public';
}

/** Where an address belongs; only `public` addresses are looked up in databases and feeds. */
export function addressScope(a: Address): AddressScope {
  return a.version === 4 ? v4Scope(a.w3) : v6Scope(a);
}
