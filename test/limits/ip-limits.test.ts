import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ipLimitResolver } from '../../src/limits/ip-limits.js';

const resolverFor = (limits: string, base = '600') => ipLimitResolver(loadConfig({ VIGIL_IP_LIMIT: base, VIGIL_IP_LIMITS: limits }));

describe('ipLimitResolver', () => {
  it('gives the default cap without overrides', () => {
    expect(resolverFor('')('203.0.113.9')).toBe(600);
    expect(resolverFor('', '50')('2001:db8::1')).toBe(50);
  });

  it('lets the most specific range win, whatever the order', () => {
    const resolve = resolverFor('10.0.0.0/8=6000,127.0.0.1/32=1000000,10.1.0.0/16=100,10.1.2.3=7');
    expect(resolve('10.9.9.9')).toBe(6000);
    expect(resolve('10.1.9.9')).toBe(100);
    expect(resolve('10.1.2.3')).toBe(7);
    expect(resolve('127.0.0.1')).toBe(1_000_000);
    expect(resolve('11.0.0.1')).toBe(600);
    // Repeated answers come from the cache and stay the same.
    expect(resolve('10.1.2.3')).toBe(7);
  });

  it('matches IPv4-mapped IPv6 socket addresses against IPv4 ranges, and IPv6 ranges', () => {
    const resolve = resolverFor('192.0.2.0/24=900,2001:db8::/32=1200,::ffff:198.51.100.0/120=30');
    expect(resolve('::ffff:192.0.2.10')).toBe(900);
    expect(resolve('2001:db8:1::5')).toBe(1200);
    expect(resolve('198.51.100.7')).toBe(30);
    expect(resolve('2001:db9::1')).toBe(600);
  });

  it('falls back to the default for something that is not an address', () => {
    expect(resolverFor('10.0.0.0/8=6000')('not-an-ip')).toBe(600);
  });
});
