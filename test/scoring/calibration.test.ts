/**
 * Score calibration on labelled sets, through the real service over HTTP (real catalog, enrichment,
 * detection and scoring): what action attacks and real benign traffic end up with. The table it
 * prints is the one published in docs/internals/detection.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/util/clock.js';
import { BENIGN_SETS, FUZZ_FILES, loadAccessLog, loadAttackFile } from '../enrichment/request-scan/fuzz-corpus.js';
import { bearer, testApp, type TestApp } from '../helpers/app.js';
import { worldEnrichment, type WorldEnrichment } from '../helpers/world-enrichment.js';

interface Result {
  risk: { score: number; action: 'allow' | 'challenge' | 'block'; breakdown: { source: string; points: number }[] };
  alerts?: { type: string }[];
}

interface Row {
  readonly scenario: string;
  readonly results: Result[];
}

/** Every n-th payload of each class: a spread over all the lists of the corpus. */
const PAYLOAD_STRIDE = 8;
/** Every n-th text of the real benign text sets: a spread over reviews, prose, names, logs and Markdown. */
const TEXT_STRIDE = 3;
const SCANNER_AGENTS = [
  'sqlmap/1.8.4#stable (https://sqlmap.org)',
  'Mozilla/5.00 (Nikto/2.5.0) (Evasions:None) (Test:000003)',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Nuclei',
  'Fuzz Faster U Fool v2.1.0-dev',
  'Wfuzz/3.1.0',
];

describe('risk score calibration on labelled sets (real service over HTTP)', () => {
  let world: WorldEnrichment;
  let t: TestApp;
  let key: string;
  const clock = new ManualClock();
  const rows: Row[] = [];

  beforeAll(async () => {
    world = await worldEnrichment();
    t = await testApp({ VIGIL_IP_LIMITS: '127.0.0.1/32=1000000' }, { enrichment: world.service, clock });
    key = (await t.account('business')).secret;
  }, 120_000);

  afterAll(async () => {
    console.log(`\n${calibrationTable(rows)}\n`);
    await t?.close();
    await world?.close();
  });

  async function send(event: Record<string, unknown>): Promise<Result> {
    const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: event });
    expect(res.statusCode, res.body).toBe(202);
    return res.json() as Result;
  }

  const share = (results: readonly Result[], pass: (r: Result) => boolean): number => results.filter(pass).length / results.length;
  const atLeastChallenge = (r: Result): boolean => r.risk.action !== 'allow';

  it('an injection payload sent by an offensive scanner reaches at least challenge', async () => {
    for (const [cls, file] of Object.entries(FUZZ_FILES)) {
      const payloads = loadAttackFile(file).attacks.filter((_, i) => i % PAYLOAD_STRIDE === 0);
      const results: Result[] = [];
      for (const [i, { payload }] of payloads.entries()) {
        const inMetadata = i % 2 === 1;
        results.push(
          await send({
            event: 'api.request',
            ip: `203.0.113.${(i % 200) + 1}`,
            user_agent: SCANNER_AGENTS[i % SCANNER_AGENTS.length],
            request: { method: 'GET', path: '/search', status: 200, ...(inMetadata ? {} : { query: `q=${encodeURIComponent(payload)}` }) },
            ...(inMetadata ? { metadata: { comment: payload } } : {}),
          }),
        );
      }
      rows.push({ scenario: `${cls} payload + scanner user agent`, results });
      // Every payload the scanner detects reaches challenge; recall is at least 95%.
      expect(share(results, atLeastChallenge), cls).toBeGreaterThanOrEqual(0.95);
      for (const r of results) if (r.risk.breakdown.some((l) => l.source === 'network.scanner_with_injection')) expect(r.risk.action).not.toBe('allow');
      expect(
        results.every((r) => r.risk.breakdown.some((l) => l.source === 'network.scanner_user_agent')),
        'every agent is a known scanner',
      ).toBe(true);
    }
  });

  it('the same payloads from an ordinary browser stay below challenge: a payload alone is a probe', async () => {
    const payloads = loadAttackFile(FUZZ_FILES.sql_injection).attacks.filter((_, i) => i % PAYLOAD_STRIDE === 0);
    const results: Result[] = [];
    for (const [i, { payload }] of payloads.entries()) {
      results.push(
        await send({
          event: 'api.request',
          ip: `198.51.100.${(i % 200) + 1}`,
          user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
          request: { method: 'GET', path: '/search', status: 200, query: `q=${encodeURIComponent(payload)}` },
        }),
      );
    }
    rows.push({ scenario: 'sql_injection payload, browser user agent', results });
    expect(share(results, (r) => r.risk.score > 0)).toBeGreaterThanOrEqual(0.95);
  });

  it('a successful login under an open brute-force alert raises auth.credential_stuffing_success and reaches at least challenge', async () => {
    const results: Result[] = [];
    for (let n = 0; n < 5; n++) {
      const actor = `victim${n}`;
      const ip = `192.0.2.${10 + n}`;
      for (let i = 0; i < 10; i++) await send({ event: 'auth.login.failure', actor_id: actor, ip });
      const success = await send({ event: 'auth.login.success', actor_id: actor, ip: `192.0.2.${100 + n}` });
      expect(success.alerts?.map((a) => a.type)).toContain('auth.credential_stuffing_success');
      results.push(success);
    }
    rows.push({ scenario: 'login success after account brute force', results });
    expect(share(results, atLeastChallenge)).toBe(1);
  });

  it('a successful login from a spraying IP raises the stuffing success and reaches at least challenge', async () => {
    const results: Result[] = [];
    for (let n = 0; n < 5; n++) {
      const ip = `192.0.2.${200 + n}`;
      for (let i = 0; i < 10; i++) await send({ event: 'auth.login.failure', actor_id: `sprayed${n}-${i}`, ip });
      const success = await send({ event: 'auth.login.success', actor_id: `sprayed${n}-ok`, ip });
      expect(success.alerts?.map((a) => a.type)).toContain('auth.credential_stuffing_success');
      results.push(success);
    }
    rows.push({ scenario: 'login success from a spraying IP', results });
    expect(share(results, atLeastChallenge)).toBe(1);
  });

  it('at least 99.5% of a real access log replay stays allow', async () => {
    const results: Result[] = [];
    for (const [i, { input }] of loadAccessLog().entries()) {
      results.push(
        await send({
          event: 'api.request',
          ip: `198.51.100.${(i % 50) + 101}`,
          ...(input.userAgent !== undefined ? { user_agent: input.userAgent } : {}),
          request: { method: 'GET', path: input.path, status: 200, ...(input.query !== undefined ? { query: input.query } : {}) },
          ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        }),
      );
    }
    rows.push({ scenario: 'real access log replay (benign)', results });
    expect(share(results, (r) => r.risk.action === 'allow')).toBeGreaterThanOrEqual(0.995);
  });

  it('at least 99.5% of real user-written text sent as event metadata stays allow', async () => {
    const texts = BENIGN_SETS.filter((s) => s.location === 'metadata' && s.set.endsWith('(real)')).flatMap((s) => s.load());
    const results: Result[] = [];
    for (const [i, { input }] of texts.entries()) {
      if (i % TEXT_STRIDE !== 0) continue;
      // A new minute every 1,000 events keeps the replay under the plan's per-minute limit.
      if (results.length % 1000 === 0) clock.advance(60_000);
      results.push(
        await send({
          event: 'api.request',
          ip: `198.51.100.${(i % 50) + 151}`,
          user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
          request: { method: 'POST', path: '/api/comments', status: 201 },
          ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        }),
      );
    }
    rows.push({ scenario: 'real reviews, prose, names, logs, README Markdown as metadata (benign)', results });
    expect(share(results, (r) => r.risk.action === 'allow')).toBeGreaterThanOrEqual(0.995);
  });
});

function calibrationTable(rows: readonly Row[]): string {
  const lines = rows.map((row) => {
    const scores = row.results.map((r) => r.risk.score).sort((a, b) => a - b);
    const median = scores[Math.floor(scores.length / 2)] ?? 0;
    const count = (action: string): number => row.results.filter((r) => r.risk.action === action).length;
    return `| ${row.scenario} | ${row.results.length} | ${scores[0] ?? 0}–${scores[scores.length - 1] ?? 0} (median ${median}) | ${count('allow')} / ${count('challenge')} / ${count('block')} |`;
  });
  return ['| scenario | events | score | allow / challenge / block |', '|---|---|---|---|', ...lines].join('\n');
}
