import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnrichment, type EnrichmentService } from '../../src/enrichment/index.js';
import { addressesInTests, GEOIP_FIXTURE } from '../fixtures/geoip/build.js';
import { classified, silentLogger } from './helpers.js';

/**
 * Test apps load the small GeoIP fixture; it must answer as the shipped data does for every address
 * the tests write, or a test would pass on locations the service never gives. A failure here means
 * a test uses an address the fixture lacks: run `npx tsx test/fixtures/geoip/build.ts`.
 */
let world: EnrichmentService;
let fixture: EnrichmentService;

beforeAll(async () => {
  [world, fixture] = await Promise.all([
    createEnrichment({ logger: silentLogger, watchFeeds: false }),
    createEnrichment({ geoipCity: GEOIP_FIXTURE.city, geoipAsn: GEOIP_FIXTURE.asn, asnCacheDir: false, logger: silentLogger, watchFeeds: false }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([world?.close(), fixture?.close()]);
});

describe('the GeoIP test fixture', () => {
  const addresses = [...addressesInTests().values()].flatMap((set) => [...set]);

  it('finds the addresses written in the tests, public ones among them', () => {
    expect(addresses).toEqual(expect.arrayContaining(['8.8.8.8', '1.1.1.1']));
  });

  it('gives every one of them the location and ASN of the shipped data', () => {
    const differ = addresses.flatMap((ip) => {
      const [expected, actual] = [world, fixture].map((service) => {
        const { geo, asn } = service.enrich(classified({ ip })).enrichment;
        return { geo, asn };
      });
      return JSON.stringify(actual) === JSON.stringify(expected) ? [] : [{ ip, expected, actual }];
    });
    expect(differ).toEqual([]);
  });

  it('knows where 8.8.8.8 is, as the shipped data does', () => {
    const { geo, asn } = fixture.enrich(classified({ ip: '8.8.8.8' })).enrichment;
    expect(geo?.country).toBe('US');
    expect(asn).toEqual({ number: 15169, organization: 'Google LLC' });
  });
});
