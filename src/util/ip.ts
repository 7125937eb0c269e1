/** IP addresses and CIDR blocks: the one parser every part of the service uses (limits, settings, enrichment, configuration). */

/**
 * A parsed IP address as 32-bit words, most significant first. IPv4 (and IPv4-mapped IPv6,
 * `::ffff:a.b.c.d`) has version 4 and its value in `w3`, the other words 0. One object shape
 * for both versions keeps lookups monomorphic.
 */
export interface Address {
  readonly version: 4 | 6;
  readonly w0: number;
  readonly w1: number;
  readonly w2: number;
  readonly w3: number;
}

const ipv4 = (value: number): Address => ({ version: 4, w0: 0, w1: 0, w2: 0, w3: value >>> 0 });

/** Parses dotted-quad text between `from` and `to`; -1 when malformed. */
function parseIPv4Value(text: string, from: number, to: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let parts = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits === 3 || (digits > 0 && part === 0)) return -1; // no leading zeros (octal ambiguity)
      part = part * 10 + (c - 48);
      digits++;
    } else if (c === 46) {
      if (digits === 0 || part > 255 || parts === 3) return -1;
      value = value * 256 + part;
      parts++;
      part = 0;
      digits = 0;
    } else return -1;
  }
  if (digits === 0 || part > 255 || parts !== 3) return -1;
  return value * 256 + part;
}

const hexValue = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

/** Parses IPv6 text (with `::`, embedded IPv4, an optional `%zone`) into eight 16-bit groups. */
function parseIPv6Groups(text: string, groups: Uint16Array): boolean {
  let end = text.indexOf('%');
  if (end < 0) end = text.length;
  let count = 0;
  let gap = -1;
  let i = 0;
  if (text.charCodeAt(0) === 58) {
    if (text.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
  }
  while (i < end) {
    if (count === 8) return false;
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < end) {
      const h = hexValue(text.charCodeAt(i));
      if (h < 0) break;
      if (++digits > 4) return false;
      value = value * 16 + h;
      i++;
    }
    const c = i < end ? text.charCodeAt(i) : -1;
    if (c === 46) {
      // Embedded IPv4 takes the last two groups.
      if (count > 6) return false;
      const v4 = parseIPv4Value(text, start, end);
      if (v4 < 0) return false;
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      i = end;
      break;
    }
    if (digits === 0) return false;
    groups[count++] = value;
    if (c === -1) break;
    if (c !== 58) return false;
    i++;
    if (text.charCodeAt(i) === 58) {
      if (gap >= 0) return false;
      gap = count;
      i++;
    } else if (i === end) return false;
  }
  if (gap < 0) return count === 8;
  if (count === 8) return false;
  const tail = count - gap;
  for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k] as number;
  for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  return true;
}

const scratch = new Uint16Array(8);

/** Parses an IPv4 or IPv6 address; undefined when the text is not one. */
export function parseAddress(text: string): Address | undefined {
  if (text.length === 0 || text.length > 64) return undefined;
  if (text.indexOf(':') < 0) {
    const value = parseIPv4Value(text, 0, text.length);
    return value < 0 ? undefined : ipv4(value);
  }
  if (!parseIPv6Groups(text, scratch)) return undefined;
  const g = scratch;
  const w0 = ((g[0] as number) << 16) | (g[1] as number);
  const w1 = ((g[2] as number) << 16) | (g[3] as number);
  const w2 = ((g[4] as number) << 16) | (g[5] as number);
  const w3 = ((g[6] as number) << 16) | (g[7] as number);
  if (w0 === 0 && w1 === 0 && w2 === 0xffff) return ipv4(w3);
  return { version: 6, w0: w0 >>> 0, w1: w1 >>> 0, w2: w2 >>> 0, w3: w3 >>> 0 };
}

/** The 128-bit value of an IPv6 address (IPv4 addresses give their 32-bit value). */
export function addressToBigInt(a: Address): bigint {
  if (a.version === 4) return BigInt(a.w3);
  return (BigInt(a.w0) << 96n) | (BigInt(a.w1) << 64n) | (BigInt(a.w2) << 32n) | BigInt(a.w3);
}

export interface Cidr {
  readonly version: 4 | 6;
  /** Prefix length over the address's own width (32 or 128); absent for a `first-last` range. */
  readonly bits?: number;
  /** First and last address of the block: numbers for IPv4, 128-bit bigints for IPv6. */
  readonly first: number | bigint;
  readonly last: number | bigint;
}

const V6_MAX = (1n << 128n) - 1n;

/** Parses `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `x::/n`. Host bits set below the prefix are ignored. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const address = parseAddress(slash < 0 ? text : text.slice(0, slash));
  if (!address) return undefined;
  const mapped = address.version === 4 && slash >= 0 && text.indexOf(':') >= 0;
  const maxBits = address.version === 4 && !mapped ? 32 : 128;
  let bits = maxBits;
  if (slash >= 0) {
    const suffix = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(suffix)) return undefined;
    bits = Number(suffix);
    if (bits > maxBits) return undefined;
  }
  if (address.version === 4) {
    // `::ffff:a.b.c.d/n` counts its prefix over 128 bits.
    const v4bits = mapped ? bits - 96 : bits;
    if (v4bits < 0) return undefined;
    const size = 2 ** (32 - v4bits);
    const first = Math.floor(address.w3 / size) * size;
    return { version: 4, bits: v4bits, first, last: first + size - 1 };
  }
  const hostMask = bits === 128 ? 0n : V6_MAX >> BigInt(bits);
  const first = addressToBigInt(address) & ~hostMask & V6_MAX;
  return { version: 6, bits, first, last: first | hostMask };
}

/** Canonical text of an address: dotted quad, or RFC 5952 IPv6 (lower case, longest zero run compressed). */
export function formatAddress(a: Address): string {
  if (a.version === 4) return `${a.w3 >>> 24}.${(a.w3 >>> 16) & 255}.${(a.w3 >>> 8) & 255}.${a.w3 & 255}`;
  const groups = [a.w0 >>> 16, a.w0 & 0xffff, a.w1 >>> 16, a.w1 & 0xffff, a.w2 >>> 16, a.w2 & 0xffff, a.w3 >>> 16, a.w3 & 0xffff];
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((g) => (g as number).toString(16))
      .join(':');
  if (bestStart < 0) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

/** Whether the block holds the address (an IPv4-mapped address counts as IPv4). */
export function cidrContains(cidr: Cidr, a: Address): boolean {
  if (cidr.version !== a.version) return false;
  if (a.version === 4) return a.w3 >= (cidr.first as number) && a.w3 <= (cidr.last as number);
  const value = addressToBigInt(a);
  return value >= (cidr.first as bigint) && value <= (cidr.last as bigint);
}

function addressOfValue(version: 4 | 6, value: number | bigint): Address {
  if (version === 4) return { version: 4, w0: 0, w1: 0, w2: 0, w3: Number(value) >>> 0 };
  const v = BigInt(value);
  const word = (shift: bigint) => Number((v >> shift) & 0xffffffffn) >>> 0;
  return { version: 6, w0: word(96n), w1: word(64n), w2: word(32n), w3: word(0n) };
}

/** Canonical text of a block: its network address and prefix length, e.g. `10.0.0.0/8`, `2001:db8::/32`. */
export function formatCidr(cidr: Cidr & { readonly bits: number }): string {
  return `${formatAddress(addressOfValue(cidr.version, cidr.first))}/${cidr.bits}`;
}

/**
 * The /24 (IPv4) or /64 (IPv6) block holding an address, as CIDR text: the network one site,
 * host or customer line usually has. Undefined for text that is not an address.
 */
export function siteNetwork(text: string): string | undefined {
  const a = parseAddress(text);
  if (a === undefined) return undefined;
  if (a.version === 4) return `${formatAddress({ version: 4, w0: 0, w1: 0, w2: 0, w3: (a.w3 & 0xffffff00) >>> 0 })}/24`;
  return `${formatAddress({ version: 6, w0: a.w0, w1: a.w1, w2: 0, w3: 0 })}/64`;
}

/** Prefix length of the network a truncated address keeps: /24 of IPv4, /48 of IPv6 (a site's allocation). */
export const TRUNCATED_BITS = Object.freeze({ 4: 24, 6: 48 });

/** The address with its host part zeroed: the first address of its /24 (IPv4) or /48 (IPv6). */
export function truncatedAddress(a: Address): Address {
  if (a.version === 4) return { version: 4, w0: 0, w1: 0, w2: 0, w3: (a.w3 & 0xffffff00) >>> 0 };
  return { version: 6, w0: a.w0, w1: (a.w1 & 0xffff0000) >>> 0, w2: 0, w3: 0 };
}
