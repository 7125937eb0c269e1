import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRY_RUN_LIMITS } from '../../src/threat-models/dry-run.js';
import { newId } from '../../src/util/ids.js';
import { bearer, type TestApp } from '../helpers/app.js';
import { expectError, roomyApp } from './support.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();
const RANGE = { from: at(-3_600_000), to: at(3_600_000) };

/**
 * A model whose every event costs milliseconds: two patterns of the most RE2 instructions a
 * pattern may have, over fields just short enough for one regex call to stay within its budget.
 * A field of `a`s without a digit makes the engine try every position.
 */
const FIELDS = ['x0', 'x1'];
const HEAVY = {
  name: 'Heavy',
  enabled: false,
  match: { event: 'custom.heavy', where: { any: FIELDS.map((f) => ({ field: `metadata.${f}`, op: 'regex', value: '(?s)a.{0,998}[0-9]' })) } },
  outcome: { alert: 'custom.heavy', severity: 'low' },
};
/** Every fifth event, by event time, carries a digit and matches. */
const heavyEvent = (i: number) => ({
  event: 'custom.heavy',
  actor_id: `h${i % 7}`,
  timestamp: at(i * 100),
  metadata: Object.fromEntries(FIELDS.map((f, j) => [f, `${'a'.repeat(108)}${i % 5 === 0 && j === 1 ? '7' : 'b'}a`])),
});
/** A model no stored event matches: a dry run that costs next to nothing. */
const NOTHING = { ...HEAVY, match: { event: 'custom.none' } };
const matchedAmong = (scanned: number) => Math.ceil(scanned / 5);
/**
 * Events a bounded dry run reads: fewer than a page, so the reading ends with its one page however
 * slow a loaded machine reads it, and the bound can only stop the evaluation.
 */
const BOUNDED_READ = 150;
/**
 * The bound of the bounded dry run: the first event is always evaluated and each costs milliseconds,
 * so evaluating all 150 takes many times this bound on the fastest machine and runtime. The grace is
 * long so that a loaded machine's slow read of the page never ends the run as stopped.
 */
const QUICK_LIMITS = { ...DRY_RUN_LIMITS, maxMs: 10, graceMs: 5_000 };

interface DryRunPage {
  readonly scanned: number;
  readonly matched: number;
  readonly alerts_raised: number;
  readonly truncated: string | null;
  readonly truncated_reason: string | null;
  readonly next_cursor: string | null;
  readonly progress: { readonly evaluated: number; readonly total: number; readonly matched: number; readonly alerts_raised: number };
}

const sum = (pages: readonly DryRunPage[], field: 'scanned' | 'matched' | 'alerts_raised') => pages.reduce((n, p) => n + p[field], 0);

/** Every page of a dry run, following next_cursor to the end. */
async function walk(app: TestApp, key: string, request: Record<string, unknown>): Promise<DryRunPage[]> {
  const pages: DryRunPage[] = [];
  let cursor: string | null | undefined;
  do {
    const res = await app.vigil.app.inject({
      method: 'POST',
      url: '/v1/threat-models/test',
      headers: bearer(key),
      payload: { ...request, ...(cursor ? { cursor } : {}) },
    });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as DryRunPage;
    pages.push(page);
    cursor = page.next_cursor;
    expect(pages.length).toBeLessThan(1_000);
  } while (cursor !== null);
  return pages;
}

describe('threat-model dry runs off the request thread', () => {
  let t: TestApp;
  let quick: TestApp;
  let heavy: { id: string; secret: string };
  let heavyModel: string;
  const HEAVY_EVENTS = 1_500;

  const post = (app: TestApp, key: string, payload: unknown) =>
    app.vigil.app.inject({ method: 'POST', url: '/v1/threat-models/test', headers: bearer(key), payload: payload as object });

  async function store(app: TestApp, key: string, events: Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < events.length; i += 100) {
      const res = await app.vigil.app.inject({ method: 'POST', url: '/v1/events/batch', headers: bearer(key), payload: { events: events.slice(i, i + 100) } });
      expect(res.statusCode, res.body).toBe(202);
    }
  }

  async function saveModel(app: TestApp, key: string, model: unknown): Promise<string> {
    const res = await app.vigil.app.inject({ method: 'POST', url: '/v1/threat-models', headers: bearer(key), payload: model as object });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { id: string }).id;
  }

  beforeAll(async () => {
    t = await roomyApp();
    quick = await roomyApp({}, { store: t.services.store, clock: t.clock, dryRunLimits: QUICK_LIMITS });
    heavy = await t.account('business');
    await store(
      t,
      heavy.secret,
      Array.from({ length: HEAVY_EVENTS }, (_, i) => heavyEvent(i)),
    );
    // Saved disabled: ingestion never evaluates it, only the dry runs below do.
    heavyModel = await saveModel(t, heavy.secret, HEAVY);
    // The thread a first dry run starts serves the next ones.
    expect((await post(t, heavy.secret, { model: NOTHING, ...RANGE })).statusCode).toBe(200);
  }, 120_000);
  // quick shares t's store: close quick's app only and leave the store to t.
  afterAll(async () => {
    await quick?.vigil.close();
    await t?.close();
  });

  it('keeps the event loop answering while a heavy model is evaluated, and stops at the time bound', async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let done = false;
    const dry = post(t, heavy.secret, { id: heavyModel, ...RANGE }).finally(() => (done = true));
    let answers = 0;
    while (!done) {
      const res = await t.vigil.app.inject({ method: 'GET', url: '/healthz' });
      if (res.statusCode === 200) answers++;
      await sleep(20);
    }
    delay.disable();
    const res = await dry;
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.truncated).toBe('time');
    expect(body.scanned).toBeLessThan(HEAVY_EVENTS);
    expect(body.matched).toBe(matchedAmong(body.scanned));
    expect(answers).toBeGreaterThan(0);
    // The one loose time bound here: a loop that evaluated the events itself would stall for
    // seconds, where reading pages, garbage collection and a busy machine cost it far less.
    expect(delay.max / 1e6).toBeLessThan(500);
  });

  it('bounds the evaluation of a saved model by id, not only the reading, and says what it evaluated', async () => {
    // A first run starts the thread, which the next run reuses.
    const warm = await post(quick, heavy.secret, { model: NOTHING, ...RANGE });
    expect(warm.statusCode, warm.body).toBe(200);
    const res = await post(quick, heavy.secret, { id: heavyModel, from: at(0), to: at(BOUNDED_READ * 100) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ truncated: 'time', alerts_raised: body.matched });
    expect(body.scanned).toBeLessThan(BOUNDED_READ);
    expect(body.matched).toBe(matchedAmong(body.scanned));
    expect(body.events).toHaveLength(body.matched);
    expect(body.truncated_reason).toMatch(/^stopped after 0\.01 s of reading and evaluation/);
    expect(body.truncated_reason).toContain(`; ${body.scanned} of the ${BOUNDED_READ} events read were evaluated, oldest first`);
  });

  it('answers 429 DRY_RUN_BUSY with Retry-After to a second dry run of the same account while the first runs', async () => {
    const [a, b] = await Promise.all([post(t, heavy.secret, { id: heavyModel, ...RANGE }), post(t, heavy.secret, { id: heavyModel, ...RANGE })]);
    const busy = [a, b].filter((r) => r.statusCode === 429);
    expect(busy, `${a.statusCode} ${a.body} / ${b.statusCode} ${b.body}`).toHaveLength(1);
    expect([a, b].filter((r) => r.statusCode === 200)).toHaveLength(1);
    const body = expectError(busy[0] as typeof a, 429, 'DRY_RUN_BUSY');
    const retryAfter = Number(busy[0]?.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(body.retry_after).toBe(retryAfter);
    // Once it has ended, the account's next dry run starts.
    expect((await post(t, heavy.secret, { model: NOTHING, ...RANGE })).statusCode).toBe(200);
  });

  it('gives a normal model the same counts, alerts and listing as before, across many pages', async () => {
    const acct = await t.account('business');
    const events = Array.from({ length: 1_200 }, (_, i) => ({
      event: i % 4 === 3 ? 'custom.other' : 'custom.login.fail',
      actor_id: `n${i % 10}`,
      timestamp: at(i * 1000),
    }));
    await store(t, acct.secret, events);
    const model = {
      name: 'Bursts',
      match: { event: 'custom.login.*' },
      threshold: { count: 3, group_by: 'actor_id', window_seconds: 60 },
      outcome: { alert: 'custom.bursts', severity: 'medium' },
    };
    const res = await post(t, acct.secret, { model, from: at(0), to: at(1_200_000) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    // Each actor matches every 10 s in three of four events: three within 60 s from its third on.
    expect(body).toMatchObject({ scanned: 1_200, matched: 900, truncated: null, truncated_reason: null });
    expect(body.events).toHaveLength(DRY_RUN_LIMITS.listed);
    expect(body.events[0]).toMatchObject({ event: 'custom.login.fail', timestamp: at(0), actor_id: 'n0' });
    // One alert per actor, updated while its bursts go on.
    expect(body.alerts_raised).toBe(10);
    expect(body.alerts).toHaveLength(10);

    expect(body).toMatchObject({ next_cursor: null, progress: { evaluated: 1_200, total: 1_200, matched: 900, alerts_raised: 10 } });

    // Pages of 500: each actor's alert goes on across pages, opened once.
    const few = await roomyApp({}, { store: t.services.store, clock: t.clock, dryRunLimits: { ...DRY_RUN_LIMITS, maxRows: 500 } });
    try {
      const pages = await walk(few, acct.secret, { model, from: at(0), to: at(1_200_000) });
      expect(pages.map((p) => p.scanned)).toEqual([500, 500, 200]);
      expect(pages[0]).toMatchObject({ truncated: 'rows', progress: { evaluated: 500, total: 1_200 } });
      expect(pages[0]?.truncated_reason).toBe('a page reads at most 500 events; these 500 were evaluated, oldest first; next_cursor continues');
      expect(sum(pages, 'matched')).toBe(900);
      expect(sum(pages, 'alerts_raised')).toBe(10);
      expect(pages[2]).toMatchObject({ truncated: null, truncated_reason: null, next_cursor: null, progress: body.progress });
    } finally {
      await few.vigil.close();
    }
  });

  it('walks a day of 25,000 events page by page to the counts of one evaluation of the whole range', async () => {
    const acct = await t.account('business');
    const start = T0 - 12 * 3_600_000;
    // An actor every 150 s. Half the actors match each time, four times in each 600 s window, so
    // each of their alerts is opened once and goes on all day; the other half match every other
    // time, twice a window, and never fire.
    const rows = Array.from({ length: 25_000 }, (_, i) => {
      const occurredAt = start + i * 3_000;
      const type = i % 4 === 3 ? 'custom.day.other' : 'custom.day.login.fail';
      const actorId = `d${i % 50}`;
      return {
        id: newId('evt', occurredAt),
        accountId: acct.id,
        type,
        eventId: null,
        occurredAt,
        receivedAt: occurredAt,
        actorId,
        ip: null,
        riskScore: 0,
        tags: [],
        doc: { event: type, actor_id: actorId, timestamp: new Date(occurredAt).toISOString() },
      };
    });
    for (let i = 0; i < rows.length; i += 2_500) await t.services.store.commit({ events: rows.slice(i, i + 2_500), alerts: [], usage: [], idempotency: [] });
    const model = {
      name: 'Day bursts',
      match: { event: 'custom.day.login.*' },
      threshold: { count: 3, group_by: 'actor_id', window_seconds: 600 },
      outcome: { alert: 'custom.day_bursts', severity: 'low' },
    };
    const range = { from: new Date(start).toISOString(), to: new Date(start + 25_000 * 3_000).toISOString() };

    const whole = await roomyApp({}, { store: t.services.store, clock: t.clock, dryRunLimits: { ...DRY_RUN_LIMITS, maxRows: 30_000, maxMs: 600_000 } });
    let one: DryRunPage;
    try {
      const res = await post(whole, acct.secret, { model, ...range });
      expect(res.statusCode, res.body).toBe(200);
      one = res.json();
    } finally {
      await whole.vigil.close();
    }
    expect(one).toMatchObject({ scanned: 25_000, matched: 18_750, alerts_raised: 25, next_cursor: null });

    const pages = await walk(t, acct.secret, { model, ...range });
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(sum(pages, 'scanned')).toBe(25_000);
    expect(sum(pages, 'matched')).toBe(one.matched);
    expect(sum(pages, 'alerts_raised')).toBe(one.alerts_raised);
    expect(pages[pages.length - 1]?.progress).toEqual({ evaluated: 25_000, total: 25_000, matched: one.matched, alerts_raised: one.alerts_raised });

    // A cursor serves its account, its model and one page.
    const first = (await post(t, acct.secret, { model, ...range })).json() as DryRunPage;
    const cursor = first.next_cursor as string;
    const other = await t.account('business');
    expectError(await post(t, other.secret, { model, cursor }), 400, 'INVALID_REQUEST');
    expectError(await post(t, acct.secret, { model: { ...model, name: 'Another' }, cursor }), 400, 'INVALID_REQUEST');
    expect((await post(t, acct.secret, { model, cursor })).statusCode).toBe(200);
    expectError(await post(t, acct.secret, { model, cursor }), 400, 'INVALID_REQUEST');
    const forged = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    for (const hostile of [
      'x',
      '!!',
      'a'.repeat(1_001),
      Buffer.from('{"__proto__":{}}').toString('base64url'),
      Buffer.from(JSON.stringify([other.id, ...forged.slice(1)])).toString('base64url'),
      Buffer.from(JSON.stringify([...forged.slice(0, 6), "1.evt_x' or 1=1 --", ...forged.slice(7)])).toString('base64url'),
      Buffer.from(JSON.stringify([...forged.slice(0, 7), -1, ...forged.slice(8)])).toString('base64url'),
    ]) {
      const res = await post(t, acct.secret, { model, cursor: hostile });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.json().details).toEqual([expect.objectContaining({ field: 'cursor' })]);
    }
  }, 300_000);

  it('documents truncated and truncated_reason in the OpenAPI document', async () => {
    const doc = (await t.vigil.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const schema = doc.paths['/v1/threat-models/test'].post.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['scanned', 'matched', 'alerts_raised', 'truncated', 'truncated_reason', 'events', 'alerts', 'next_cursor', 'progress']),
    );
  });
});
