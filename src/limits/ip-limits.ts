import { cidrContains, parseAddress, type Cidr } from '../util/ip.js';

const CACHE_LIMIT = 10_000;

/** A per-address cap for a range of addresses (VIGIL_IP_LIMITS). */
export interface IpLimitOverride {
  readonly cidr: string;
  readonly range: Cidr & { readonly bits: number };
  readonly perMinute: number;
}

/**
 * The per-minute cap of a source address (VIGIL_IP_LIMIT / VIGIL_IP_LIMITS):
 * the override of the most specific range holding the address (the first listed on a
 * tie), else the default. Answers are cached per address string (bounded).
 */
export function ipLimitResolver(config: { ipLimitPerMinute: number; ipLimits: readonly IpLimitOverride[] }): (ip: string) => number {
  const fallback = config.ipLimitPerMinute;
  if (config.ipLimits.length === 0) return () => fallback;
  // An address only falls in ranges of its own version, so prefix lengths compare directly.
  const bySpecificity = [...config.ipLimits].sort((a, b) => b.range.bits - a.range.bits);
  const cache = new Map<string, number>();
  return (ip: string): number => {
    const cached = cache.get(ip);
    if (cached !== undefined) return cached;
    const addr = parseAddress(ip);
    const limit = (addr && bySpecificity.find((o) => cidrContains(o.range, addr))?.perMinute) ?? fallback;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(ip, limit);
    return limit;
  };
}
