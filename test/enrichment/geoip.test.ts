import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Enrichment, GeoInfo } from '../../src/event/enrichment.js';
import { createEnrichment } from '../../src/enrichment/index.js';
import { worldEnrichment, type WorldEnrichment } from '../helpers/world-enrichment.js';
import { classified } from './helpers.js';

/** Real databases shipped in node_modules (DB-IP Lite city, ip-location-db ASN) and the fixture feeds. */
let world: WorldEnrichment;
const enrich = (fields: Parameters<typeof classified>[0]): Enrichment => world.service.enrich(classified(fields)).enrichment;

beforeAll(async () => {
  world = await worldEnrichment();
}, 120_000);
afterAll(async () => {
  await world?.close();
});

/** A box around a country: the point must fall inside it. */
const within = (geo: GeoInfo | undefined, lat: [number, number], lon: [number, number]) => {
  expect(geo?.latitude).toBeGreaterThanOrEqual(lat[0]);
  expect(geo?.latitude).toBeLessThanOrEqual(lat[1]);
  expect(geo?.longitude).toBeGreaterThanOrEqual(lon[0]);
  expect(geo?.longitude).toBeLessThanOrEqual(lon[1]);
};

describe('GeoIP on the shipped database', () => {
  it('8.8.8.8 is Google in the United States', () => {
    const e = enrich({ ip: '8.8.8.8' });
    expect(e.geo?.country).toBe('US');
    within(e.geo, [24, 50], [-125, -66]);
    expect(e.asn).toEqual({ number: 15169, organization: 'Google LLC' });
  });

  it('1.1.1.1 is Cloudflare, located in Australia by DB-IP (APNIC research range)', () => {
    const e = enrich({ ip: '1.1.1.1' });
    expect(e.geo?.country).toBe('AU');
    within(e.geo, [-44, -10], [112, 154]);
    expect(e.asn?.number).toBe(13335);
  });

  it('193.0.6.139 (RIPE NCC) is in Amsterdam', () => {
    const e = enrich({ ip: '193.0.6.139' });
    expect(e.geo?.country).toBe('NL');
    within(e.geo, [52.2, 52.5], [4.7, 5.1]);
    expect(e.geo?.region).toBeTruthy();
    expect(e.geo?.city).toMatch(/Amsterdam/);
    expect(e.asn?.number).toBe(3333);
  });

  it('81.2.69.160 is in Great Britain', () => {
    const e = enrich({ ip: '81.2.69.160' });
    expect(e.geo?.country).toBe('GB');
    within(e.geo, [49.9, 60.9], [-8.7, 1.8]);
  });

  it('IPv6: 2a00:1450:4001:80b::200e is Google in Germany', () => {
    const e = enrich({ ip: '2a00:1450:4001:80b::200e' });
    expect(e.network).toEqual({ ip: '2a00:1450:4001:80b::200e', version: 6, scope: 'public' });
    expect(e.geo?.country).toBe('DE');
    within(e.geo, [47, 55.1], [5.8, 15.1]);
    expect(e.asn?.number).toBe(15169);
  });

  it('IPv6: 2606:4700:4700::1111 is Cloudflare', () => expect(enrich({ ip: '2606:4700:4700::1111' }).asn?.number).toBe(13335));

  it('a repeated address answers the same location, shared and immutable; a mapped IPv4 form the IPv4 one', () => {
    const first = enrich({ ip: '193.0.6.139' }).geo;
    const again = enrich({ ip: '193.0.6.139' }).geo;
    expect(again).toBe(first);
    expect(Object.isFrozen(again)).toBe(true);
    expect(enrich({ ip: '::ffff:193.0.6.139' }).geo).toEqual(first);
  });

  it('private and documentation addresses get no location', () => {
    for (const ip of ['10.0.0.1', '192.168.1.1', '100.64.0.1', '127.0.0.1', '169.254.0.1', '203.0.113.5', 'fe80::1']) {
      const e = enrich({ ip });
      expect(e.network?.scope).not.toBe('public');
      expect(e.geo).toBeUndefined();
      expect(e.asn).toBeUndefined();
      expect(e.threat).toBeUndefined();
    }
  });
});

describe('threat intel through the service', () => {
  it('flags a Tor exit node and a blocklisted address', () => {
    expect(enrich({ ip: '185.220.101.1' }).threat).toMatchObject({ torExit: true });
    expect(enrich({ ip: '45.155.205.3' }).threat?.blocklists).toEqual(['blocklist-example', 'firehol_level1']);
  });

  it('flags a hosting ASN from the ASN database', () => {
    // 8.8.8.8 is AS15169, listed in the fixture hosting-asns.txt.
    expect(enrich({ ip: '8.8.8.8' }).threat).toEqual({ torExit: false, blocklists: [], hostingAsn: true });
    expect(enrich({ ip: '193.0.6.139' }).threat).toEqual({ torExit: false, blocklists: [], hostingAsn: false });
  });

  it('a bogon netset does not blocklist private addresses (they are never looked up)', () => {
    expect(enrich({ ip: '10.1.1.1' }).threat).toBeUndefined();
  });
});

describe('the whole enrichment', () => {
  it('adds user agent, email and password, and nothing secret', () => {
    const hash = '7c4a8d09ca3762af61e59520943dc26494f8941b'; // sha1("123456")
    const e = enrich({ ip: '8.8.8.8', userAgent: 'sqlmap/1.7.2#stable (https://sqlmap.org)', email: 'Eve+x@mailinator.com', passwordSha1: hash });
    expect(e.userAgent).toMatchObject({ automated: true, scanner: 'sqlmap' });
    expect(e.email).toEqual({ domain: 'mailinator.com', normalized: 'eve@mailinator.com', disposable: true });
    expect(e.breachedPassword).toBe(true);
    expect(JSON.stringify(e)).not.toContain(hash);
  });

  it('status reports every source', () => {
    const s = world.service.status() as Record<string, any>;
    expect(s.geoip).toMatchObject({ enabled: true, attribution: expect.stringContaining('DB-IP') });
    expect(s.asn).toMatchObject({ enabled: true, source: 'csv' });
    expect(s.asn.ranges.ipv4).toBeGreaterThan(100_000);
    expect(s.asn.ranges.ipv6).toBeGreaterThan(10_000);
    expect(s.feeds).toMatchObject({ enabled: true, malformedLines: 3 });
    expect(s.enrichers).toEqual(['network', 'geo', 'asn', 'threat', 'user_agent', 'email', 'password', 'request_scan']);
  });
});

describe('missing databases', () => {
  it('each logs one warning and disables only its enrichment', async () => {
    const warnings: string[] = [];
    const logger = { warn: (_o: object, msg?: string) => void warnings.push(msg ?? ''), info: () => undefined };
    const partial = await createEnrichment({ geoipCity: '/nonexistent/city.mmdb', geoipAsn: '/nonexistent/asn', feedsDir: '/nonexistent/feeds', logger });
    try {
      expect(warnings).toHaveLength(3);
      expect(warnings[0]).toMatch(/GeoIP/);
      expect(warnings[1]).toMatch(/ASN/);
      expect(warnings[2]).toMatch(/feed/);
      const e = partial.enrich(classified({ ip: '8.8.8.8', userAgent: 'curl/8.0' })).enrichment;
      expect(e.network?.scope).toBe('public');
      expect(e.geo).toBeUndefined();
      expect(e.asn).toBeUndefined();
      expect(e.threat).toBeUndefined();
      expect(e.userAgent?.automated).toBe(true);
      expect(partial.status()).toMatchObject({ geoip: { enabled: false }, asn: { enabled: false }, feeds: { enabled: false } });
      partial.enrich(classified({ ip: '1.1.1.1' }));
      expect(warnings).toHaveLength(3);
    } finally {
      await partial.close();
    }
  });
});
