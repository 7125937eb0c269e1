import { isIP } from 'node:net';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { addressToBigInt, cidrContains, formatCidr, parseAddress, parseCidr, type Address, type Cidr } from '../../src/util/ip.js';
import { addressScope } from '../../src/enrichment/ip/scope.js';

describe('parseAddress', () => {
  it.each([
    ['8.8.8.8', 4, 0x08080808n],
    ['255.255.255.255', 4, 0xffffffffn],
    ['::', 6, 0n],
    ['::1', 6, 1n],
    ['2001:db8::1', 6, 0x20010db8000000000000000000000001n],
    ['2001:DB8:0:0:0:0:0:1', 6, 0x20010db8000000000000000000000001n],
    ['fe80::1%eth0', 6, 0xfe800000000000000000000000000001n],
    ['::ffff:1.2.3.4', 4, 0x01020304n],
    ['64:ff9b::1.2.3.4', 6, 0x0064ff9b000000000000000001020304n],
    ['1:2:3:4:5:6:7::', 6, 0x00010002000300040005000600070000n],
  ] as const)('%s', (text, version, value) => {
    const a = parseAddress(text);
    expect(a?.version).toBe(version);
    expect(addressToBigInt(a!)).toBe(value);
  });

  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '1.2.3.4 ',
    'a.b.c.d',
    '1::2::3',
    ':1',
    '1:',
    '12345::',
    '1:2:3:4:5:6:7:8:9',
    'gg::',
    '::1.2.3',
    '1.2.3.04x',
  ])('rejects %j', (text) => expect(parseAddress(text)).toBeUndefined());

  it('agrees with ipaddr.js on random IPv6 addresses in every textual form', () => {
    fc.assert(
      fc.property(fc.ipV6(), (text) => {
        const expected = BigInt(
          '0x' +
            ipaddr.IPv6.parse(text)
              .toByteArray()
              .map((b) => b.toString(16).padStart(2, '0'))
              .join(''),
        );
        const a = parseAddress(text);
        expect(a).toBeDefined();
        const mapped = expected >> 32n === 0xffffn;
        expect(addressToBigInt(a!)).toBe(mapped ? expected & 0xffffffffn : expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts exactly what node:net accepts for IPv4', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV4Extended(), fc.string()), (text) => {
        expect(parseAddress(text) !== undefined && !text.includes(':'), text).toBe(isIP(text) === 4);
      }),
    );
  });
});

describe('parseCidr', () => {
  it('reads IPv4 and IPv6 blocks and single addresses', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({
      version: 4,
      bits: 8,
      first: 0x0a000000,
      last: 0x0affffff,
    });
    expect(parseCidr('1.2.3.4')).toEqual({
      version: 4,
      bits: 32,
      first: 0x01020304,
      last: 0x01020304,
    });
    expect(parseCidr('1.2.3.4/24')).toEqual({
      version: 4,
      bits: 24,
      first: 0x01020300,
      last: 0x010203ff,
    });
    expect(parseCidr('0.0.0.0/0')).toEqual({
      version: 4,
      bits: 0,
      first: 0,
      last: 0xffffffff,
    });
    expect(parseCidr('2001:db8::/32')).toEqual({
      version: 6,
      bits: 32,
      first: 0x20010db8n << 96n,
      last: (0x20010db8n << 96n) | ((1n << 96n) - 1n),
    });
    expect(parseCidr('2001:db8::1')).toEqual({
      version: 6,
      bits: 128,
      first: 0x20010db8000000000000000000000001n,
      last: 0x20010db8000000000000000000000001n,
    });
  });
  it('canonical text, containment, and IPv4-mapped blocks counted as IPv4', () => {
    expect(formatCidr(parseCidr('10.1.2.3/8') as Cidr & { bits: number })).toBe('10.0.0.0/8');
    expect(formatCidr(parseCidr('2001:DB8:0:0::1/48') as Cidr & { bits: number })).toBe('2001:db8::/48');
    const mapped = parseCidr('::ffff:10.0.0.0/104') as Cidr;
    expect(mapped).toMatchObject({ version: 4, bits: 8 });
    expect(cidrContains(mapped, parseAddress('10.9.9.9') as Address)).toBe(true);
    expect(cidrContains(mapped, parseAddress('11.0.0.1') as Address)).toBe(false);
    expect(cidrContains(parseCidr('2001:db8::/32') as Cidr, parseAddress('2001:db8:ffff::1') as Address)).toBe(true);
    expect(cidrContains(parseCidr('2001:db8::/32') as Cidr, parseAddress('10.0.0.1') as Address)).toBe(false);
  });
  it.each(['1.2.3.4/33', '1.2.3.4/', '1.2.3.4/a', '::/129', 'x/8', '1.2.3.4/8/8'])('rejects %j', (t) => expect(parseCidr(t)).toBeUndefined());
});

describe('addressScope', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['169.254.10.10', 'link_local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.99', 'documentation'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['2001:4860:4860::8888', 'public'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link_local'],
    ['fd00::1', 'private'],
    ['fc00::1', 'private'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['ff02::1', 'multicast'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.4.4', 'public'],
    ['64:ff9b::808:808', 'reserved'],
  ] as const)('%s is %s', (ip, scope) => expect(addressScope(parseAddress(ip)!)).toBe(scope));
});
