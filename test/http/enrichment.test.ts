import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/catalog.js';
import { AGENT_ADDITIONAL_TYPES, AGENT_TYPES, BASE_SCORES, STANDARD_TYPES } from '../../src/catalog/event-types.js';
import { FIXTURE_INPUT } from '../catalog/fixture-input.js';
import { bearer, SCALE_OUT, testApp, type TestApp } from '../helpers/app.js';
import { worldEnrichment, type WorldEnrichment } from '../helpers/world-enrichment.js';

/**
 * The real app with the real catalog, enrichment (shipped GeoIP/ASN, fixture feeds in a temp
 * folder) and scoring in place of the services' defaults; everything else as in production.
 */
// Enrichment does not depend on the storage or limit backends: the scale-out project skips it.
describe.skipIf(SCALE_OUT)('catalog, enrichment and scoring over HTTP', () => {
  let world: WorldEnrichment;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    world = await worldEnrichment();
    t = await testApp({ VIGIL_IP_LIMITS: '127.0.0.1/32=1000000' }, { enrichment: world.service, catalog: buildCatalog(FIXTURE_INPUT) });
    key = (await t.account('business')).secret;
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await world?.close();
  });

  type Result = {
    id: string;
    status: string;
    risk: { score: number; level: string; action: string; breakdown: { source: string; points: number }[] };
    tags: string[];
  };

  async function send(event: Record<string, unknown>): Promise<Result> {
    const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: event });
    expect(res.statusCode, res.body).toBe(202);
    return res.json() as Result;
  }

  async function stored(id: string): Promise<Record<string, any>> {
    const res = await t.vigil.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers: bearer(key) });
    expect(res.statusCode).toBe(200);
    return res.json();
  }

  const pointsOf = (r: Result, source: string) => r.risk.breakdown.find((l) => l.source === source)?.points;

  describe('base scores over HTTP', () => {
    it('every predefined type gets its base score (one batch of 98)', async () => {
      const types = [...STANDARD_TYPES, ...AGENT_TYPES, ...AGENT_ADDITIONAL_TYPES].map((t) => t.type);
      const res = await t.vigil.app.inject({
        method: 'POST',
        url: '/v1/events/batch',
        headers: bearer(key),
        payload: { events: types.map((event) => ({ event, actor_id: 'u1' })) },
      });
      expect(res.statusCode, res.body).toBe(202);
      const results = (res.json() as { results: Result[] }).results;
      expect(results).toHaveLength(98);
      results.forEach((r, i) => {
        const expected = BASE_SCORES[types[i] as string] ?? 0;
        // Detectors may add alert lines (e.g. mfa_tampering on auth.mfa.disabled); the base line is the type's.
        expect(pointsOf(r, 'base'), types[i]).toBe(expected > 0 ? expected : undefined);
        expect(
          r.risk.breakdown.filter((l) => !l.source.startsWith('alert.') && !l.source.startsWith('floor.') && l.source !== 'cap'),
          types[i],
        ).toEqual(expected > 0 ? [{ source: 'base', points: expected }] : []);
      });
    });

    it('custom.* scores 0', async () => expect((await send({ event: 'custom.cart.checkout' })).risk.score).toBe(0));
  });

  describe('inferred types over HTTP', () => {
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['auth.failure', { request: { method: 'POST', path: '/login', status: 401 } }, { request: { method: 'POST', path: '/orders', status: 401 } }],
      [
        'auth.success',
        { actor_id: 'u1', request: { method: 'POST', path: '/auth/session', status: 200 } },
        { request: { method: 'POST', path: '/auth/session', status: 200 } },
      ],
      ['auth.logout', { request: { method: 'POST', path: '/logout', status: 204 } }, { request: { method: 'POST', path: '/home', status: 204 } }],
      [
        'data.export',
        { request: { method: 'GET', path: '/reports/export', status: 200 }, metadata: { rows: 20 } },
        { request: { method: 'GET', path: '/reports/export', status: 200 } },
      ],
      [
        'account.create',
        { email: 'a@example.com', request: { method: 'POST', path: '/signup', status: 201 } },
        { request: { method: 'POST', path: '/signup', status: 201 } },
      ],
      ['account.delete', { request: { method: 'DELETE', path: '/users/9', status: 204 } }, { request: { method: 'GET', path: '/users/9', status: 200 } }],
      ['role.change', { metadata: { new_role: 'admin' } }, { metadata: { colour: 'red' } }],
      ['mfa.event', { metadata: { totp: 'ok' } }, { metadata: { footprint: 1 } }],
      [
        'password.event',
        { email: 'a@example.com', request: { method: 'POST', path: '/password/reset', status: 200 } },
        { request: { method: 'POST', path: '/password/reset', status: 200 } },
      ],
      ['rate.limited', { request: { method: 'GET', path: '/x', status: 429 } }, { request: { method: 'GET', path: '/x', status: 200 } }],
    ];
    it.each(cases)('inferred:%s is tagged when the pattern matches and not otherwise', async (type, positive, negative) => {
      const yes = await send({ event: 'api.request', ...positive });
      expect(yes.tags).toContain(`inferred:${type}`);
      expect((await stored(yes.id)).tags).toContain(`inferred:${type}`);
      const no = await send({ event: 'api.request', ...negative });
      expect(no.tags).not.toContain(`inferred:${type}`);
    });
  });

  describe('enrichment and threat intel over HTTP', () => {
    it('stores GeoIP and ASN for a public address', async () => {
      const r = await send({ event: 'auth.login.success', actor_id: 'u1', ip: '193.0.6.139' });
      const doc = await stored(r.id);
      expect(doc.enrichment.geo.country).toBe('NL');
      expect(doc.enrichment.geo.latitude).toBeCloseTo(52.37, 0);
      expect(doc.enrichment.asn.number).toBe(3333);
      expect(doc.enrichment.network).toEqual({ ip: '193.0.6.139', version: 4, scope: 'public' });
    });

    it('flags a private address and does not look it up', async () => {
      const r = await send({ event: 'auth.login.success', actor_id: 'u1', ip: '10.20.30.40' });
      const doc = await stored(r.id);
      expect(doc.enrichment.network.scope).toBe('private');
      expect(doc.enrichment.geo).toBeUndefined();
      expect(doc.enrichment.threat).toBeUndefined();
      expect(r.risk.breakdown.some((l) => l.source.startsWith('threat_intel'))).toBe(false);
    });

    it('a Tor exit adds 25 to a base-0 event, and its alert lifts the event to challenge', async () => {
      const r = await send({ event: 'custom.page.view', ip: '185.220.101.2' });
      expect(r.risk.breakdown).toEqual([
        { source: 'threat_intel.tor_exit', points: 25 },
        { source: 'floor.network.tor_exit_node', points: 25 },
      ]);
      expect(r.risk.action).toBe('challenge');
    });

    it('a blocklisted address adds 30, and its alert lifts the event to challenge', async () => {
      const r = await send({ event: 'auth.login.failure', actor_id: 'u2', ip: '91.240.118.172' });
      expect(pointsOf(r, 'base')).toBe(10);
      expect(pointsOf(r, 'threat_intel.blocklist')).toBe(30);
      expect(pointsOf(r, 'floor.network.blocklisted_ip')).toBe(10);
      expect(r.risk).toMatchObject({ score: 50, action: 'challenge' });
    });

    it('a hosting ASN adds 10 on an auth event only', async () => {
      // 8.8.8.8 is AS15169, in the fixture hosting-asns.txt.
      expect(pointsOf(await send({ event: 'auth.login.success', actor_id: 'u3', ip: '8.8.8.8' }), 'threat_intel.hosting_asn')).toBe(10);
      expect(pointsOf(await send({ event: 'data.accessed', actor_id: 'u3', ip: '8.8.8.8' }), 'threat_intel.hosting_asn')).toBeUndefined();
    });

    it('a scanner user agent adds 15, other automation 5', async () => {
      expect(pointsOf(await send({ event: 'api.request', user_agent: 'sqlmap/1.7.2#stable (https://sqlmap.org)' }), 'network.scanner_user_agent')).toBe(15);
      expect(pointsOf(await send({ event: 'api.request', user_agent: 'curl/8.4.0' }), 'network.automation_user_agent')).toBe(5);
    });

    it('checks password_sha1 and never stores it', async () => {
      const hash = '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8';
      const r = await send({ event: 'auth.password.changed', actor_id: 'u4', password_sha1: hash, email: 'Bob+1@Mailinator.com' });
      const doc = await stored(r.id);
      expect(doc.enrichment.breached_password).toBe(true);
      expect(doc.enrichment.email).toEqual({ domain: 'mailinator.com', normalized: 'bob@mailinator.com', disposable: true });
      expect(JSON.stringify(doc)).not.toContain(hash);
    });

    it('a feed reload while traffic runs changes the answer atomically and fails no request', async () => {
      const ip = '77.88.99.11';
      expect(pointsOf(await send({ event: 'custom.ping', ip }), 'threat_intel.blocklist')).toBeUndefined();
      await writeFile(join(world.feedsDir, 'blocklist-live.txt'), `${ip}\n`);
      const traffic = Array.from({ length: 40 }, () => send({ event: 'custom.ping', ip }));
      const reload = world.service.feeds!.reload();
      const results = await Promise.all(traffic);
      await reload;
      for (const r of results) expect([undefined, 30]).toContain(pointsOf(r, 'threat_intel.blocklist'));
      expect(pointsOf(await send({ event: 'custom.ping', ip }), 'threat_intel.blocklist')).toBe(30);
    });
  });

  describe('GET /v1/catalog', () => {
    it('serves the catalog document', async () => {
      const res = await t.vigil.app.inject({ method: 'GET', url: '/v1/catalog', headers: bearer(key) });
      expect(res.statusCode).toBe(200);
      const doc = res.json();
      expect(doc.counts).toMatchObject({ standard_types: 67, agent_types: 28, additional_agent_types: 3, inferred_types: 10, families: 10 });
      expect(doc.event_types.find((t: { type: string }) => t.type === 'server.user.modified')).toMatchObject({ kind: 'agent_additional', base_score: 0 });
      expect(doc.event_types.find((t: { type: string }) => t.type === 'server.container.escape_attempt').base_score).toBe(60);
    });
  });
});
