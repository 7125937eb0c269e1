import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { formatAddress, parseAddress } from '../../src/util/ip.js';

describe('formatAddress', () => {
  it('gives the canonical IPv6 text ipaddr.js gives', () => {
    fc.assert(
      fc.property(
        fc.ipV6().filter((ip) => !ip.includes('.')),
        (ip) => formatAddress(parseAddress(ip)!) === ipaddr.process(ip).toString(),
      ),
      { numRuns: 5000 },
    );
  });
  it('round-trips dotted quads and unmaps IPv4-mapped IPv6', () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => formatAddress(parseAddress(ip)!) === ip));
    expect(formatAddress(parseAddress('::FFFF:10.1.2.3')!)).toBe('10.1.2.3');
    expect(formatAddress(parseAddress('2001:0DB8:0:0:1:0:0:1')!)).toBe('2001:db8::1:0:0:1');
  });
});
