import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/util/ids.js';
import type { TestApp } from '../helpers/app.js';
import { getJson, postEvent, roomyApp } from './support.js';

/** Every member name of an answer, outside the sender's own metadata, with its path. */
function memberNames(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => memberNames(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, member]) => (key === 'metadata' ? [key] : [`${path}.${key}`, ...memberNames(member, `${path}.${key}`)]));
}

const notSnake = (names: string[]) => names.filter((n) => !/^[a-z0-9_]+$/.test(n.slice(n.lastIndexOf('.') + 1)));

describe('one case in every answer: snake_case', () => {
  let t: TestApp;
  let acct: { id: string; secret: string };
  beforeAll(async () => {
    t = await roomyApp();
    acct = await t.account('pro');
  });
  afterAll(() => t.close());

  it('an ingested event read back: enrichment (user agent, geo, threat, email, password) is snake_case like the rest', async () => {
    const res = await postEvent(t, acct.secret, {
      event: 'auth.login.success',
      actor_id: 'case-user',
      email: 'case@example.com',
      ip: '203.0.113.7',
      user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      password_sha1: '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8',
      metadata: { camelCaseIsTheSenders: true },
    });
    expect(res.statusCode).toBe(202);
    const doc = (await getJson(t, acct.secret, `/v1/events/${res.json().id}`)).json();
    expect(doc.enrichment.user_agent).toMatchObject({ browser: 'Chrome', browser_version: expect.any(String), device_type: expect.any(String) });
    expect(doc.enrichment).toHaveProperty('breached_password');
    expect(doc.metadata).toEqual({ camelCaseIsTheSenders: true });
    expect(notSnake(memberNames(doc))).toEqual([]);
    const list = (await getJson(t, acct.secret, '/v1/events?actor_id=case-user')).json();
    expect(notSnake(memberNames(list))).toEqual([]);
  });

  it('an event stored by an earlier version with camelCase enrichment reads back in snake_case', async () => {
    const now = t.clock.now();
    const id = newId('evt', now);
    const enrichment = {
      userAgent: { browser: 'Firefox', browserVersion: '128.0', deviceType: 'desktop', family: 'Firefox/Linux', automated: false },
      threat: { torExit: true, blocklists: ['firehol_level1'], hostingAsn: false },
      geo: { country: 'DE', accuracyRadiusKm: 20 },
      breachedPassword: false,
    };
    await t.services.store.commit({
      events: [
        {
          id,
          accountId: acct.id,
          type: 'auth.login.success',
          eventId: null,
          occurredAt: now,
          receivedAt: now,
          actorId: 'legacy-user',
          ip: null,
          riskScore: 0,
          tags: [],
          doc: { id, event: 'auth.login.success', actor_id: 'legacy-user', enrichment },
        },
      ],
      alerts: [],
      usage: [],
      idempotency: [],
    });
    const doc = (await getJson(t, acct.secret, `/v1/events/${id}`)).json();
    expect(doc.enrichment).toEqual({
      user_agent: { browser: 'Firefox', browser_version: '128.0', device_type: 'desktop', family: 'Firefox/Linux', automated: false },
      threat: { tor_exit: true, blocklists: ['firehol_level1'], hosting_asn: false },
      geo: { country: 'DE', accuracy_radius_km: 20 },
      breached_password: false,
    });
    const listed = (await getJson(t, acct.secret, '/v1/events?actor_id=legacy-user')).json().data;
    expect(listed[0].enrichment).toEqual(doc.enrichment);
  });
});
