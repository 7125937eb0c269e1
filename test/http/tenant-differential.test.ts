/**
 * Differential tenant isolation: random interleaved streams from several accounts that reuse
 * the same actor ids, addresses, session ids and event ids are sent to one service; each
 * account's answers, stored events, alerts and usage must equal those of the same account's
 * events sent, at the same times, to a fresh service where it is alone. Any state shared between
 * accounts (detector windows, seen-sets, alert deduplication, kill-chain progress, idempotency)
 * makes some account's view differ. Runs in both projects (embedded, and PostgreSQL + Redis).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnrichment, type EnrichmentService } from '../../src/enrichment/index.js';
import type { TestApp } from '../helpers/app.js';
import { allEvents, getJson, postEvent, roomyApp } from './support.js';

const ACTORS = ['alice', 'bob', 'carol'];
/** London, Tokyo, Mountain View, and a documentation address (no location). */
const IPS = ['81.2.69.142', '133.242.187.207', '8.8.8.8', '203.0.113.9'];
const SESSIONS = ['s1', 's2'];
const EVENT_IDS = ['e1', 'e2', 'e3'];
const TYPES = [
  'auth.login.failure',
  'auth.login.failure',
  'auth.login.success',
  'auth.mfa.challenge_failed',
  'auth.password.reset_completed',
  'account.role.changed',
  'data.exported',
  'admin.user.impersonated',
];
const USER_AGENTS = ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) Safari/605.1.15', 'curl/8.4.0'];

const eventArb = fc.record(
  {
    event: fc.constantFrom(...TYPES),
    actor_id: fc.constantFrom(...ACTORS),
    ip: fc.constantFrom(...IPS),
    user_agent: fc.constantFrom(...USER_AGENTS),
    session_id: fc.constantFrom(...SESSIONS),
    event_id: fc.constantFrom(...EVENT_IDS),
    metadata: fc.constantFrom({ rows: 50_000 }, { role: 'admin' }, {}),
  },
  { requiredKeys: ['event', 'actor_id', 'ip'] },
);

const stepArb = fc.record({
  account: fc.nat({ max: 2 }),
  /** Milliseconds the clock moves before this step. */
  advance: fc.constantFrom(0, 500, 5_000, 60_000, 10 * 60_000),
  events: fc.array(eventArb, { minLength: 1, maxLength: 3 }),
  batch: fc.boolean(),
});

interface Step {
  readonly account: number;
  readonly advance: number;
  readonly events: readonly Record<string, unknown>[];
  readonly batch: boolean;
}

type View = { answers: unknown[]; events: string[]; alerts: string[]; usage: unknown };

/** What an answer shows a customer, without the ids a fresh service makes anew. */
function answerView(result: Record<string, any>): unknown {
  return {
    status: result.status,
    risk: result.risk,
    tags: result.tags,
    alerts: (result.alerts ?? []).map((a: Record<string, unknown>) => `${a.type}/${a.severity}`),
  };
}

async function send(t: TestApp, key: string, step: Step): Promise<unknown[]> {
  if (step.batch && step.events.length > 1) {
    const res = await postEvent(t, key, { events: step.events }, '/v1/events/batch');
    expect(res.statusCode).toBe(202);
    return res.json().results.map(answerView);
  }
  const out: unknown[] = [];
  for (const event of step.events) {
    const res = await postEvent(t, key, event);
    // Event ids repeat with other payloads: an idempotency conflict is an answer to compare too.
    expect([202, 409]).toContain(res.statusCode);
    out.push(res.statusCode === 409 ? { status: 409, error: res.json().error } : answerView(res.json()));
  }
  return out;
}

async function finalView(t: TestApp, key: string, answers: unknown[]): Promise<View> {
  const events = (await allEvents(t, key)).map((e: Record<string, any>) =>
    JSON.stringify([e.type, e.actor_id, e.ip, e.event_id, e.session_id, e.risk?.score ?? e.risk_score, e.tags]),
  );
  const alerts = (await getJson(t, key, '/v1/alerts?limit=100'))
    .json()
    .data.map((a: Record<string, unknown>) =>
      JSON.stringify([a.type, a.subject, a.severity, a.count, a.status, (a.event_ids as unknown[] | undefined)?.length]),
    );
  const usage = (await getJson(t, key, '/v1/usage')).json();
  return { answers, events: events.sort(), alerts: alerts.sort(), usage: { used: usage.used, dropped: usage.dropped } };
}

describe('differential tenant isolation', () => {
  // One GeoIP load for every service of the run: the services differ in their state, not their data.
  let enrichment: EnrichmentService;
  beforeAll(async () => {
    enrichment = await createEnrichment({ logger: { warn: () => undefined, info: () => undefined } });
  });
  afterAll(() => enrichment.close());
  const freshService = () => roomyApp({}, { enrichment });

  it('each account sees exactly what it would see alone, whatever the others send', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 4, maxLength: 24 }), async (steps) => {
        const accounts = [...new Set(steps.map((s) => s.account))];
        const shared = await freshService();
        const views = new Map<number, View>();
        const times: number[] = [];
        try {
          const keys = new Map<number, string>();
          for (const n of accounts) keys.set(n, (await shared.account('pro')).secret);
          const answers = new Map<number, unknown[]>(accounts.map((n) => [n, []]));
          for (const step of steps) {
            shared.clock.advance(step.advance);
            times.push(shared.clock.now());
            answers.get(step.account)?.push(...(await send(shared, keys.get(step.account) as string, step)));
          }
          for (const n of accounts) views.set(n, await finalView(shared, keys.get(n) as string, answers.get(n) as unknown[]));
        } finally {
          await shared.close();
        }
        for (const n of accounts) {
          const alone = await freshService();
          try {
            const key = (await alone.account('pro')).secret;
            const answers: unknown[] = [];
            for (const [i, step] of steps.entries()) {
              if (step.account !== n) continue;
              alone.clock.set(times[i] as number);
              answers.push(...(await send(alone, key, step)));
            }
            expect(views.get(n)).toEqual(await finalView(alone, key, answers));
          } finally {
            await alone.close();
          }
        }
      }),
      { numRuns: Number(process.env.VIGIL_ISOLATION_RUNS ?? 6), endOnFailure: true },
    );
  }, 120_000);
});
