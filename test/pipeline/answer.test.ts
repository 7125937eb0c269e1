import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AccountContext } from '../../src/event/account.js';
import type { AlertHit } from '../../src/event/alert.js';
import type { Enrichment } from '../../src/event/enrichment.js';
import type { ScoredEvent } from '../../src/event/types.js';
import { snakeEnrichmentJson, snakeJson, toEventResult, toEventRow } from '../../src/pipeline/answer.js';
import { isoTime } from '../../src/util/iso-time.js';
import { snakeCaseKeys } from '../../src/util/snake-case.js';
import { escapingText, jsonLike } from '../helpers/json-arbitraries.js';

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

describe('snakeEnrichmentJson', () => {
  it('is the snake_case JSON of the enrichment, for shared (frozen) parts and per-event ones alike', () => {
    const expected = JSON.stringify(snakeCaseKeys(enrichment));
    expect(snakeEnrichmentJson(enrichment)).toBe(expected);
    // The second time a frozen part's text comes from its cache: still the same text.
    expect(snakeEnrichmentJson(enrichment)).toBe(expected);
    expect(JSON.parse(expected)).toMatchObject({ geo: { accuracy_radius_km: 20 }, threat: { tor_exit: true }, breached_password: true });
  });

  it('leaves absent parts out and writes an empty enrichment as {}', () => {
    expect(snakeEnrichmentJson({})).toBe('{}');
    expect(snakeEnrichmentJson({ geo: undefined, email: { domain: 'example.com', normalized: 'a@example.com', disposable: false } })).toBe(
      '{"email":{"domain":"example.com","normalized":"a@example.com","disposable":false}}',
    );
  });
});

describe('snakeJson', () => {
  // Names as Vigil's documents have them (distinct in snake_case), some needing escapes.
  const value = jsonLike(
    fc.constantFrom('torExit', 'browserVersion', 'ip', 'accuracyRadiusKm', '10', '9', 'a_b', '', 'q"uote', 'back\\slash', '\u0000ctl', '\ud800'),
  ).filter((v) => v !== undefined);

  it('is JSON.stringify(snakeCaseKeys(value)) for any JSON-like value, undefined members and items, NaN and -0 included', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(snakeJson(v)).toBe(JSON.stringify(snakeCaseKeys(v)));
      }),
      { numRuns: 2000 },
    );
  });
});

const ctx = { account: { id: 'acct_1' } } as AccountContext;

/** The stored document as one object, serialised in one call: what toEventRow's pasted text must equal. */
function documentText(event: ScoredEvent, degraded: boolean): string {
  const result = toEventResult(event, degraded);
  return JSON.stringify({
    id: event.id,
    event: event.type,
    event_id: event.eventId,
    timestamp: isoTime(event.occurredAt),
    received_at: isoTime(event.receivedAt),
    actor_id: event.actorId,
    email: event.email,
    ip: event.ip,
    user_agent: event.userAgent,
    session_id: event.sessionId,
    host: event.host,
    request: event.request,
    metadata: event.metadata,
    classification: { predefined: event.classification.predefined, base_score: event.classification.baseScore, families: [...event.classification.families] },
    enrichment: snakeCaseKeys(event.enrichment),
    risk: result.risk,
    tags: result.tags,
    alerts: result.alerts,
    degraded: result.degraded,
  });
}

const optionalText = fc.option(escapingText, { nil: undefined });
const jsonValue = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const scoredEvent: fc.Arbitrary<ScoredEvent> = fc
  .record({
    type: fc.constantFrom('auth.login.succeeded', 'risk.\u2028,"risk":odd', 'server.ssh.login'),
    eventId: optionalText,
    actorId: optionalText,
    email: optionalText,
    ip: fc.option(fc.ipV4(), { nil: undefined }),
    userAgent: optionalText,
    sessionId: optionalText,
    host: optionalText,
    request: fc.option(fc.record({ method: fc.constantFrom('GET', 'POST'), path: fc.string({ maxLength: 30 }) }), { nil: undefined }),
    metadata: fc.dictionary(fc.string({ maxLength: 12 }), jsonValue, { maxKeys: 4 }),
    frozenParts: fc.boolean(),
    withEnrichment: fc.boolean(),
    alerts: fc.array(fc.record({ id: fc.uuid(), type: fc.constantFrom('brute_force', 'impossible_travel'), severity: fc.constantFrom('low', 'high') }), {
      maxLength: 2,
    }),
    score: fc.integer({ min: 0, max: 100 }),
    sources: fc.array(escapingText, { maxLength: 3 }),
    tags: fc.array(escapingText, { maxLength: 3 }),
  })
  .map((r) => {
    const parts: Enrichment = r.withEnrichment ? { ...enrichment, geo: r.frozenParts ? geo : { ...geo }, threat: r.frozenParts ? threat : { ...threat } } : {};
    return {
      id: '0193a1b2c3d4e5f6a7b8c9d0e1f2a3b4',
      type: r.type,
      eventId: r.eventId,
      occurredAt: 1_790_000_000_000,
      receivedAt: 1_790_000_000_123,
      actorId: r.actorId,
      email: r.email,
      ip: r.ip,
      userAgent: r.userAgent,
      sessionId: r.sessionId,
      host: r.host,
      request: r.request,
      metadata: r.metadata,
      classification: { predefined: true, baseScore: 10, inferred: ['auth.success'], families: new Set(['authentication'] as const), detectors: [] },
      enrichment: parts,
      alerts: r.alerts.map((a) => ({ ...a, tags: a.type === 'brute_force' ? ['custom', ...r.tags] : undefined }) as unknown as AlertHit),
      risk: {
        score: r.score,
        level: 'low',
        action: 'allow',
        breakdown: [{ source: 'base', points: r.score }, ...r.sources.map((source, i) => ({ source, points: i + 1 }))],
      },
    } as ScoredEvent;
  });

describe('toEventRow', () => {
  it('writes the same document text as serialising the whole document at once', () => {
    fc.assert(
      fc.property(scoredEvent, fc.boolean(), (event, degraded) => {
        const row = toEventRow(event, ctx, toEventResult(event, degraded));
        expect(row.docJson).toBe(documentText(event, degraded));
        expect(JSON.parse(row.docJson)).toMatchObject({ id: event.id, risk: { score: event.risk.score } });
      }),
      { numRuns: 500 },
    );
  });
});
