/**
 * Server-side request forgery guard. A webhook URL may only reach public unicast addresses:
 * loopback, private, link-local, unique-local, carrier-grade NAT, multicast, reserved and the
 * cloud metadata addresses are refused, unless the operator allows a range (VIGIL_WEBHOOK_ALLOW_CIDRS).
 * The check runs when the URL is saved and again at every connection: the address is resolved,
 * checked, and the socket connects to that checked address, so a name that later resolves
 * elsewhere (DNS rebinding) is refused at delivery time.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
// ipaddr.js classifies an address by the IANA special-purpose registries (unique local, NAT64,
// broadcast, ...), finer than the scopes the enrichment needs. It only classifies: every address
// is parsed by the service's one IP module first and reaches ipaddr.js as bytes, never as text
// (an architecture test holds this file to ipaddr.fromByteArray).
import ipaddr from 'ipaddr.js';
import { cidrContains, formatAddress, parseAddress, parseCidr, type Address, type Cidr } from '../util/ip.js';

export type AllowedRange = Cidr;

/** The loopback ranges, for an operator who allows a server on the same machine. */
export const LOOPBACK_RANGES: readonly AllowedRange[] = ['127.0.0.0/8', '::1/128'].map((text) => parseCidr(text) as Cidr);

/** Resolves a host name to every address it has (the dns module by default; tests substitute their own). */
export type Resolver = (host: string) => Promise<readonly { address: string; family: number }[]>;

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** Addresses the instance metadata services of the large clouds answer on. */
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254']);

const RANGE_NAMES: Readonly<Record<string, string>> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  carrierGradeNat: 'private (carrier-grade NAT)',
  linkLocal: 'link-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
};

export interface SsrfGuard {
  readonly allowed: readonly AllowedRange[];
  readonly resolve: Resolver;
}

/**
 * The IPv6 forms that carry an IPv4 address, with the one they carry (undefined when where it sits
 * depends on the network). Each may reach that IPv4 host through a translator, relay or tunnel on
 * the way, so none is reached whatever it embeds: judged by its IPv6 value alone, `::7f00:1`
 * (`[::127.0.0.1]` in a URL) is an ordinary unicast address. IPv4-mapped addresses
 * (`::ffff:a.b.c.d`) are not among them: the address parser reads them as the IPv4 address
 * itself, which a dual-stack socket connects to, so they are judged as that address.
 */
function embeddingForm(a: Address): { readonly form: string; readonly ipv4?: number } | undefined {
  if (a.version !== 6) return undefined;
  const { w0, w1, w2, w3 } = a;
  // `::` and `::1` are the unspecified and loopback addresses, which the ranges below name.
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 > 1) return { form: 'IPv4-compatible, ::/96', ipv4: w3 };
  if (w0 === 0 && w1 === 0 && w2 === 0xffff0000) return { form: 'IPv4-translated, ::ffff:0:0:0/96', ipv4: w3 };
  if (w0 === 0x0064ff9b && w1 === 0 && w2 === 0) return { form: 'NAT64, 64:ff9b::/96', ipv4: w3 };
  // The local-use prefix is subdivided by each network: the IPv4 address's place depends on its prefix length.
  if (w0 === 0x0064ff9b && w1 >>> 16 === 1) return { form: 'local-use NAT64, 64:ff9b:1::/48' };
  if (w0 >>> 16 === 0x2002) return { form: '6to4, 2002::/16', ipv4: (((w0 & 0xffff) << 16) | (w1 >>> 16)) >>> 0 };
  // Teredo carries its server in the second word and the client's public address, bit-inverted, in the last.
  if (w0 === 0x20010000) return { form: 'Teredo, 2001::/32', ipv4: ~w3 >>> 0 };
  return undefined;
}

/** Why an IPv6 address that embeds an IPv4 address may not be reached; undefined for any other address. */
function embeddedReason(a: Address): string | undefined {
  const embedding = embeddingForm(a);
  if (embedding === undefined) return undefined;
  if (embedding.ipv4 === undefined) return `a reserved address (${embedding.form})`;
  const ipv4 = formatAddress({ version: 4, w0: 0, w1: 0, w2: 0, w3: embedding.ipv4 });
  const inner = forbiddenAddress(ipv4, []);
  return `a reserved address (${embedding.form}) embedding ${ipv4}${inner === undefined ? '' : `, ${inner}`}`;
}

/** The address's bytes, most significant first: 4 for IPv4 (and IPv4-mapped IPv6), 16 for IPv6. */
function bytesOf(a: Address): number[] {
  const words = a.version === 4 ? [a.w3] : [a.w0, a.w1, a.w2, a.w3];
  return words.flatMap((w) => [w >>> 24, (w >>> 16) & 255, (w >>> 8) & 255, w & 255]);
}

/** Why this address may not be reached, or undefined when it may. */
export function forbiddenAddress(address: string, allowed: readonly AllowedRange[]): string | undefined {
  const parsed = parseAddress(address);
  if (parsed === undefined) return 'not an IP address';
  if (allowed.some((range) => cidrContains(range, parsed))) return undefined;
  const embedded = embeddedReason(parsed);
  if (embedded !== undefined) return embedded;
  if (METADATA.has(formatAddress(parsed))) return 'a cloud metadata address';
  const range = ipaddr.fromByteArray(bytesOf(parsed)).range();
  if (range === 'unicast') return undefined;
  return `a ${RANGE_NAMES[range] ?? `reserved (${range})`} address`;
}

export type UrlCheck = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly reason: string };

const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Whether a URL's host is an address rather than a name (the URL parser has already made it canonical). */
export const isAddress = (host: string): boolean => parseAddress(host) !== undefined;

/** Checks a URL's form and every address its host resolves to. */
export async function checkUrl(text: string, guard: SsrfGuard): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'must use https or http' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'must not carry credentials' };
  const host = bareHost(url);
  let addresses: readonly { address: string }[];
  if (isAddress(host)) addresses = [{ address: host }];
  else {
    try {
      addresses = await guard.resolve(host);
    } catch {
      return { ok: false, reason: `host ${host} does not resolve` };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve` };
  for (const { address } of addresses) {
    const why = forbiddenAddress(address, guard.allowed);
    if (why !== undefined) return { ok: false, reason: `resolves to ${address}, ${why}; such addresses are refused` };
  }
  return { ok: true, url };
}

export class ForbiddenAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_FORBIDDEN_ADDRESS';
}

/**
 * A `lookup` for http(s).request: resolves, refuses if any address is forbidden, and hands the
 * socket the checked address to connect to. IP-literal hosts never reach a lookup, so the
 * caller checks those with forbiddenAddress first.
 */
export function guardedLookup(guard: SsrfGuard): LookupFunction {
  return (hostname, options, callback) => {
    guard.resolve(hostname).then(
      (addresses) => {
        const family = typeof options === 'object' && options !== null ? (options as { family?: number }).family : undefined;
        const usable = addresses.filter((a) => !family || a.family === family);
        for (const { address } of usable) {
          const why = forbiddenAddress(address, guard.allowed);
          if (why !== undefined) {
            callback(new ForbiddenAddressError(`${hostname} resolves to ${address}, ${why}`), '', 0);
            return;
          }
        }
        const first = usable[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        if ((options as { all?: boolean } | undefined)?.all)
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [first]);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

export const hostOf = bareHost;
