import { describe, expect, it } from 'vitest';
import type { Enricher } from '../../src/enrichment/enricher.js';
import { asnEnricher, geoEnricher, networkEnricher, passwordEnricher, threatEnricher } from '../../src/enrichment/enrichers.js';
import type { FeedStore } from '../../src/enrichment/feeds/feed-store.js';
import { FeedSnapshot } from '../../src/enrichment/feeds/snapshot.js';
import { parseIpFeed } from '../../src/enrichment/feeds/parse.js';
import type { AsnDatabase } from '../../src/enrichment/geoip/asn.js';
import type { CityDatabase } from '../../src/enrichment/geoip/city.js';
import { BreachedPasswords } from '../../src/enrichment/password/breached.js';
import { runEnrichers } from '../../src/enrichment/enricher.js';
import { classified, silentLogger } from './helpers.js';

/** Fake databases that record every address they are asked about. */
function recorders() {
  const asked: string[] = [];
  const city: CityDatabase = { lookup: (ip) => (asked.push(`city:${ip}`), { country: 'ZZ' }), status: () => ({}) };
  const asn: AsnDatabase = { lookup: (_a, ip) => (asked.push(`asn:${ip}`), { number: 64500 }), status: () => ({}) };
  const snapshot = FeedSnapshot.build([{ file: 'blocklist.txt', name: 'blocklist', kind: 'blocklist', ip: parseIpFeed('0.0.0.0/0\n::/0\n') }]);
  const feeds = {
    get snapshot() {
      asked.push('feeds');
      return snapshot;
    },
  } as unknown as FeedStore;
  const stage = runEnrichers([networkEnricher, geoEnricher(city), asnEnricher(asn), threatEnricher(feeds)]);
  return { asked, stage };
}

describe('address scope rules', () => {
  it.each([
    ['10.1.2.3', 'private'],
    ['192.168.0.10', 'private'],
    ['172.20.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['100.64.12.1', 'cgnat'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['2001:db8::5', 'documentation'],
    ['fd12:3456::1', 'private'],
    ['::ffff:192.168.1.1', 'private'],
  ])('%s is flagged %s and never looked up', (ip, scope) => {
    const { asked, stage } = recorders();
    const out = stage(classified({ ip })).enrichment;
    expect(out.network).toMatchObject({ ip, scope });
    expect(out.geo).toBeUndefined();
    expect(out.asn).toBeUndefined();
    expect(out.threat).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('a public address is looked up in every source', () => {
    const { asked, stage } = recorders();
    const out = stage(classified({ ip: '8.8.8.8' })).enrichment;
    expect(out.network).toEqual({ ip: '8.8.8.8', version: 4, scope: 'public' });
    expect(asked).toEqual(['city:8.8.8.8', 'asn:8.8.8.8', 'feeds']);
    expect(out.threat).toEqual({ torExit: false, blocklists: ['blocklist'], hostingAsn: false });
  });

  it('an IPv4-mapped IPv6 address is looked up as IPv4', () => {
    const { asked, stage } = recorders();
    expect(stage(classified({ ip: '::ffff:8.8.4.4' })).enrichment.network).toEqual({ ip: '::ffff:8.8.4.4', version: 4, scope: 'public' });
    expect(asked[0]).toBe('city:8.8.4.4');
  });

  it('an unparseable address gets no network part and no lookup', () => {
    const { asked, stage } = recorders();
    expect(stage(classified({ ip: 'not-an-ip' })).enrichment).toEqual({});
    expect(asked).toEqual([]);
  });
});

describe('enrich stage', () => {
  it('keeps the event fields and adds enrichment', () => {
    const stage = runEnrichers([networkEnricher]);
    const event = classified({ ip: '1.1.1.1', actorId: 'u1' });
    const out = stage(event);
    expect(out).toMatchObject({ actorId: 'u1', ip: '1.1.1.1', classification: event.classification });
    expect(out.enrichment.network?.scope).toBe('public');
  });

  it('an enricher that throws is reported and skipped; the others still run', () => {
    const failing: Enricher = {
      name: 'broken',
      enrich: () => {
        throw new Error('bug');
      },
    };
    const errors: string[] = [];
    const stage = runEnrichers([failing, networkEnricher], (name) => errors.push(name));
    expect(stage(classified({ ip: '1.1.1.1' })).enrichment.network).toBeDefined();
    expect(errors).toEqual(['broken']);
  });

  it('password_sha1 leaves only a boolean in the enrichment', () => {
    const hash = '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8'; // sha1("password")
    const stage = runEnrichers([passwordEnricher(BreachedPasswords.open({ logger: silentLogger }))]);
    const out = stage(classified({ passwordSha1: hash }));
    expect(out.enrichment).toEqual({ breachedPassword: true });
    expect(JSON.stringify(out.enrichment)).not.toContain(hash);
  });
});
