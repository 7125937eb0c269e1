import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { bearer, type TestApp } from '../helpers/app.js';
import { roomyApp } from './support.js';

/**
 * Sigma conformance: each fixture under test/fixtures/sigma is a rule, the events sent after it
 * is saved, and the indexes of the events whose 202 carries the rule's alert (or, for a rule
 * that must be refused, text the refusal names). Everything goes through the HTTP API.
 */
interface Fixture {
  readonly description: string;
  readonly rule: string;
  readonly events?: readonly (Record<string, unknown> & { at?: number })[];
  readonly matches?: readonly number[];
  readonly refused?: string;
}

const DIR = join(import.meta.dirname, '../fixtures/sigma');
const FIXTURES = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((file) => ({ file, fixture: parse(readFileSync(join(DIR, file), 'utf8')) as Fixture }));
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('Sigma conformance fixtures', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await roomyApp();
  });
  afterAll(() => t.close());

  it('has fixtures for matching and for refusals', () => {
    expect(FIXTURES.filter((f) => f.fixture.refused === undefined).length).toBeGreaterThanOrEqual(30);
    expect(FIXTURES.filter((f) => f.fixture.refused !== undefined).length).toBeGreaterThanOrEqual(10);
  });

  it.each(FIXTURES)('$file', async ({ fixture }) => {
    const { secret } = await t.account('business');
    const created = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/threat-models',
      headers: { ...bearer(secret), 'content-type': 'application/yaml' },
      payload: fixture.rule,
    });
    if (fixture.refused !== undefined) {
      expect(created.statusCode, created.body).toBe(400);
      const body = created.json();
      expect(body.error).toBe('INVALID_THREAT_MODEL');
      expect(body.message).toContain(fixture.refused);
      expect(body.details[0].field).toMatch(/^rule/);
      return;
    }
    expect(created.statusCode, created.body).toBe(201);
    const alert = created.json().outcome.alert as string;
    const fired: number[] = [];
    for (const [i, raw] of (fixture.events ?? []).entries()) {
      const { at, ...fields } = raw;
      const event = { event: 'custom.sigma.fixture', ...fields, ...(at === undefined ? {} : { timestamp: new Date(T0 + at * 1000).toISOString() }) };
      const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(secret), payload: event });
      expect(res.statusCode, res.body).toBe(202);
      if ((res.json().alerts as { type: string }[]).some((a) => a.type === alert)) fired.push(i);
    }
    expect(fired, fixture.description).toEqual(fixture.matches);
  });
});
