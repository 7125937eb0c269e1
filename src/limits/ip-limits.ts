import ipaddr from 'ipaddr.js';
import type { IpLimitOverride } from '../config/config.js';

const CACHE_LIMIT = 10_000;

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Parses a socket or header address; IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes IPv4. Undefined when not an address. */
export function parseAddress(ip: string): Address | undefined {
  try {
    return ipaddr.process(ip);
  } catch {
    return undefined;
  }
}

function matches(addr: Address, range: IpLimitOverride['range']): boolean {
  const [net] = range;
  if (addr.kind() === net.kind()) return addr.match(range);
  // An IPv6 range may be written for IPv4-mapped addresses (::ffff:0:0/96).
  return addr.kind() === 'ipv4' && net.kind() === 'ipv6' && (addr as ipaddr.IPv4).toIPv4MappedAddress().match(range);
}

/**
 * The per-minute cap of a source address (VIGIL_IP_LIMIT / VIGIL_IP_LIMITS, design 13):
 * the override of the most specific range holding the address (the first listed on a
 * tie), else the default. Answers are cached per address string (bounded).
 */
export function ipLimitResolver(config: { ipLimitPerMinute: number; ipLimits: readonly IpLimitOverride[] }): (ip: string) => number {
  const fallback = config.ipLimitPerMinute;
  if (config.ipLimits.length === 0) return () => fallback;
  const bySpecificity = [...config.ipLimits].sort((a, b) => b.range[1] - a.range[1]);
  const cache = new Map<string, number>();
  return (ip: string): number => {
    const cached = cache.get(ip);
    if (cached !== undefined) return cached;
    const addr = parseAddress(ip);
    const limit = (addr && bySpecificity.find((o) => matches(addr, o.range))?.perMinute) ?? fallback;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(ip, limit);
    return limit;
  };
}
