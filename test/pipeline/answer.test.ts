import { describe, expect, it } from 'vitest';
import type { Enrichment } from '../../src/event/enrichment.js';
import { snakeEnrichment } from '../../src/pipeline/answer.js';
import { snakeCaseKeys } from '../../src/util/snake-case.js';

describe('snakeEnrichment', () => {
  const geo = Object.freeze({ country: 'DE', city: 'Berlin', latitude: 52.52, longitude: 13.405, accuracyRadiusKm: 20 });
  const threat = Object.freeze({ torExit: true, blocklists: Object.freeze(['firehol_level1']), hostingAsn: false });
  const enrichment: Enrichment = {
    network: { ip: '203.0.113.9', version: 4, scope: 'public' },
    geo,
    threat,
    userAgent: { browser: 'Firefox', browserVersion: '128', family: 'Firefox/Linux', automated: false },
    breachedPassword: true,
    scan: [{ class: 'sql_injection', location: 'metadata.q' }],
  };

  it('is the snake_case JSON of the enrichment, for shared (frozen) parts and per-event ones alike', () => {
    const expected = JSON.stringify(snakeCaseKeys(enrichment));
    expect(JSON.stringify(snakeEnrichment(enrichment))).toBe(expected);
    // The second time a frozen part comes from its cache: still the same text.
    expect(JSON.stringify(snakeEnrichment(enrichment))).toBe(expected);
    expect(JSON.parse(expected)).toMatchObject({ geo: { accuracy_radius_km: 20 }, threat: { tor_exit: true }, breached_password: true });
  });

  it('leaves absent parts out and writes an empty enrichment as {}', () => {
    expect(JSON.stringify(snakeEnrichment({}))).toBe('{}');
    expect(JSON.stringify(snakeEnrichment({ geo: undefined, email: { domain: 'example.com', normalized: 'a@example.com', disposable: false } }))).toBe(
      '{"email":{"domain":"example.com","normalized":"a@example.com","disposable":false}}',
    );
  });
});
