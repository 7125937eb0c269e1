import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { IngestAdmission, RETRY_AFTER_MAX_S, type AdmissionRefused } from '../../src/http/ingest-admission.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { CommitBatch } from '../../src/storage/types.js';
import type { Store } from '../../src/storage/store.js';
import { bearer, SCALE_OUT, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { allEvents, expectError, getJson, postEvent, postRaw, roomyApp, usedThisMonth } from './support.js';

describe('IngestAdmission', () => {
  it('admits up to its budget, then first come first served as earlier requests leave', async () => {
    const admission = new IngestAdmission(unbounded(100));
    const order: string[] = [];
    expect(admission.enter(60, A)).toBeUndefined();
    expect(admission.enter(40, A)).toBeUndefined();
    const third = waits(admission.enter(10, A));
    const fourth = waits(admission.enter(5, A));
    void third.then(() => order.push('third'));
    void fourth.then(() => order.push('fourth'));
    // A small body behind a waiting one waits too: the queue keeps its order.
    expect(admission.enter(1, A)).toBeInstanceOf(Promise);
    expect(admission.queued).toBe(3);
    admission.leave(40, A);
    await Promise.resolve();
    expect(order).toEqual(['third', 'fourth']);
    expect(admission.bytesInFlight).toBe(60 + 10 + 5 + 1);
    expect(admission.queued).toBe(0);
  });

  it('admits a body larger than the budget when nothing else is in flight', async () => {
    const admission = new IngestAdmission(unbounded(10));
    expect(admission.enter(1_000, A)).toBeUndefined();
    const next = waits(admission.enter(1_000, A));
    let entered = false;
    void next.then(() => (entered = true));
    admission.leave(1_000, A);
    await next;
    expect(entered).toBe(true);
    expect(admission.bytesInFlight).toBe(1_000);
  });

  it('keeps its order through a long queue that never drains completely', async () => {
    const admission = new IngestAdmission(unbounded(1));
    expect(admission.enter(1, A)).toBeUndefined();
    const entered: number[] = [];
    for (let i = 0; i < 5_000; i++) void waits(admission.enter(1, A)).then(() => entered.push(i));
    for (let i = 0; i < 4_000; i++) admission.leave(1, A);
    await new Promise((resolve) => setImmediate(resolve));
    expect(entered).toEqual(Array.from({ length: 4_000 }, (_, i) => i));
    expect(admission.queued).toBe(1_000);
    for (let i = 0; i < 1_000; i++) admission.leave(1, A);
    await new Promise((resolve) => setImmediate(resolve));
    expect(entered).toHaveLength(5_000);
    expect(entered[4_999]).toBe(4_999);
  });
});

describe('IngestAdmission past its limits', () => {
  /** An admission on a clock the test moves. */
  function timed(limits: { budgetBytes: number; maxInFlight?: number; maxWaiting: number; maxWaitMs: number }, random = () => 0) {
    let now = 0;
    const admission = new IngestAdmission(limits, { now: () => now, random });
    return { admission, advance: (ms: number) => (now += ms) };
  }

  it('refuses a request when maxWaiting requests wait, and lets one wait again once the queue moves', () => {
    const { admission } = timed({ budgetBytes: 10, maxWaiting: 2, maxWaitMs: 0 });
    expect(admission.enter(10, A)).toBeUndefined();
    void waits(admission.enter(10, A));
    void waits(admission.enter(10, B));
    expect(admission.overloaded).toBe(true);
    expect(admission.enter(10, C)).toEqual({ refused: 'waiting_full' });
    // A refused request takes no turn: the two waiting enter one after the other.
    admission.leave(10, A);
    expect(admission.inFlightRequests).toBe(1);
    expect(admission.queued).toBe(1);
    void waits(admission.enter(10, C));
    expect(admission.enter(1, A)).toEqual({ refused: 'waiting_full' });
  });

  it('lets the accounts with requests waiting take turns, one request each per round', async () => {
    const admission = new IngestAdmission(unbounded(1));
    const order: string[] = [];
    expect(admission.enter(1, A)).toBeUndefined();
    for (let i = 1; i <= 4; i++) void waits(admission.enter(1, A)).then(() => order.push(`A${i}`));
    void waits(admission.enter(1, B)).then(() => order.push('B1'));
    void waits(admission.enter(1, C)).then(() => order.push('C1'));
    void waits(admission.enter(1, B)).then(() => order.push('B2'));
    const accountOf = { A, B, C } as Record<string, string>;
    let last: string = A;
    for (let i = 0; i < 7; i++) {
      admission.leave(1, last);
      await new Promise((resolve) => setImmediate(resolve));
      last = accountOf[(order.at(-1) ?? '').slice(0, 1)] as string;
    }
    // B and C sent after four of A's requests, yet wait for one of them only.
    expect(order).toEqual(['A1', 'B1', 'C1', 'A2', 'B2', 'A3', 'A4']);
    expect(admission.queued).toBe(0);
  });

  it('keeps a share of the waiting room free for an account that has nothing waiting', () => {
    const { admission } = timed({ budgetBytes: 1, maxWaiting: 8, maxWaitMs: 0 });
    expect(admission.enter(1, A)).toBeUndefined();
    // Alone, an account may fill half of the room: the other half is for the next account.
    for (let i = 0; i < 4; i++) void waits(admission.enter(1, A));
    expect(admission.enter(1, A)).toEqual({ refused: 'account_share' });
    // With two accounts waiting, a share is a third of the room.
    void waits(admission.enter(1, B));
    void waits(admission.enter(1, B));
    expect(admission.enter(1, B)).toEqual({ refused: 'account_share' });
    void waits(admission.enter(1, C));
    void waits(admission.enter(1, D));
    expect(admission.queued).toBe(8);
    expect(admission.enter(1, E)).toEqual({ refused: 'waiting_full' });
  });

  it("refuses an account whose own oldest request has waited past maxWaitMs, and not the others'", () => {
    const { admission, advance } = timed({ budgetBytes: 1, maxWaiting: 100, maxWaitMs: 500 });
    expect(admission.enter(1, A)).toBeUndefined();
    void waits(admission.enter(1, A));
    advance(501);
    expect(admission.overloaded).toBe(true);
    expect(admission.enter(1, A)).toEqual({ refused: 'wait_too_long' });
    void waits(admission.enter(1, B));
    expect(admission.queued).toBe(2);
  });

  it("counts the other accounts' turns, not their whole queues, in the wait it expects for an account", () => {
    const { admission, advance } = timed({ budgetBytes: 1, maxWaiting: 1_000, maxWaitMs: 100 });
    expect(admission.enter(1, A)).toBeUndefined();
    saturate(admission, advance, 30, 10);
    // 100 a second: A's eleventh waiting request would enter too late; B's first enters after one of A's.
    for (let i = 0; i < 10; i++) void waits(admission.enter(1, A));
    expect(admission.enter(1, A)).toEqual({ refused: 'wait_too_long' });
    void waits(admission.enter(1, B));
    void waits(admission.enter(1, B));
    expect(admission.queued).toBe(12);
  });

  it('with no room to wait, refuses every request the budget does not admit at once', () => {
    const { admission } = timed({ budgetBytes: 10, maxWaiting: 0, maxWaitMs: 1_000 });
    expect(admission.enter(6, A)).toBeUndefined();
    expect(admission.enter(4, A)).toBeUndefined();
    expect(admission.enter(1, A)).toEqual({ refused: 'waiting_full' });
    admission.leave(6, A);
    expect(admission.enter(6, A)).toBeUndefined();
  });

  it('admits at most maxInFlight requests at once, however small their bodies', () => {
    const { admission } = timed({ budgetBytes: 1_000, maxInFlight: 2, maxWaiting: 1, maxWaitMs: 0 });
    expect(admission.enter(1, A)).toBeUndefined();
    expect(admission.enter(1, A)).toBeUndefined();
    const third = waits(admission.enter(1, A));
    expect(admission.enter(1, A)).toEqual({ refused: 'waiting_full' });
    let entered = false;
    void third.then(() => (entered = true));
    admission.leave(1, A);
    expect(admission.inFlightRequests).toBe(2);
    return third.then(() => expect(entered).toBe(true));
  });

  it('refuses a request once the head of the queue has waited longer than maxWaitMs', () => {
    const { admission, advance } = timed({ budgetBytes: 1, maxWaiting: 100, maxWaitMs: 500 });
    expect(admission.enter(1, A)).toBeUndefined();
    void waits(admission.enter(1, A));
    advance(500);
    void waits(admission.enter(1, A));
    expect(admission.overloaded).toBe(false);
    advance(1);
    expect(admission.overloaded).toBe(true);
    expect(admission.enter(1, A)).toEqual({ refused: 'wait_too_long' });
  });

  it('refuses a request that the measured drain rate would not bring in within maxWaitMs', () => {
    const { admission, advance } = timed({ budgetBytes: 1, maxWaiting: 1_000, maxWaitMs: 100 });
    expect(admission.enter(1, A)).toBeUndefined();
    // Saturated: one request finishes every 10 ms while others wait, for 300 ms: 100 a second.
    saturate(admission, advance, 30, 10);
    expect(admission.queued).toBe(0);
    // Nine waiting and this one: its turn comes in 100 ms, within the bound; an eleventh's would not.
    for (let i = 0; i < 10; i++) void waits(admission.enter(1, A));
    expect(admission.enter(1, A)).toEqual({ refused: 'wait_too_long' });
    expect(admission.queued).toBe(10);
  });

  it('answers a Retry-After from the drain rate, spread up to its double, within 1 to 30 seconds', () => {
    const saturated = (random: number) => {
      const { admission, advance } = timed({ budgetBytes: 1, maxWaiting: 10_000, maxWaitMs: 0 }, () => random);
      expect(admission.enter(1, A)).toBeUndefined();
      // 20 requests a second while others wait.
      saturate(admission, advance, 10, 50);
      // 99 waiting and one in flight: five seconds of work at 20 a second.
      for (let i = 0; i < 99; i++) void waits(admission.enter(1, A));
      return admission;
    };
    expect(saturated(0).retryAfterSeconds()).toBe(5);
    expect(saturated(0.5).retryAfterSeconds()).toBe(8);
    expect(saturated(0.999).retryAfterSeconds()).toBe(10);
    // Nothing has finished yet: the longest.
    const { admission } = timed({ budgetBytes: 1, maxWaiting: 0, maxWaitMs: 0 });
    expect(admission.enter(1, A)).toBeUndefined();
    expect(admission.enter(1, A)).toEqual({ refused: 'waiting_full' });
    expect(admission.retryAfterSeconds()).toBe(RETRY_AFTER_MAX_S);
  });
});

const [A, B, C, D, E] = ['account-a', 'account-b', 'account-c', 'account-d', 'account-e'] as const;

/**
 * Keeps account A's requests waiting behind one in flight for `count` turns, one finishing every
 * `everyMs`: a measured drain rate of 1,000 / `everyMs` a second.
 */
function saturate(admission: IngestAdmission, advance: (ms: number) => void, count: number, everyMs: number): void {
  for (let i = 0; i < count; i++) {
    void waits(admission.enter(1, A));
    advance(everyMs);
    admission.leave(1, A);
  }
}

/** Limits that never refuse: the budget alone decides. */
function unbounded(budgetBytes: number) {
  return { budgetBytes, maxWaiting: Number.MAX_SAFE_INTEGER, maxWaitMs: 0 };
}

function waits(admitted: Promise<void> | AdmissionRefused | undefined): Promise<void> {
  if (!(admitted instanceof Promise)) throw new Error(`expected to wait, got ${JSON.stringify(admitted)}`);
  return admitted;
}

// The gate holds commits of the embedded store; scaled out, the store is PostgreSQL's.
// Requests wait as long as the gate holds them: no bound on the wait refuses any.
const UNBOUNDED_WAIT = { VIGIL_INGEST_IN_FLIGHT_BYTES: '1024', VIGIL_INGEST_MAX_WAIT_MS: '0' };

describe.skipIf(SCALE_OUT)('ingestion beyond the admission budget', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.close());

  it('queues bodies past the budget, answers every request and stores every event, in arrival order', async () => {
    const { store, open } = gatedStore();
    // The smallest budget: one batch is admitted, the rest wait for it to commit.
    t = await roomyApp(UNBOUNDED_WAIT, { store });
    const app = t;
    const acct = await app.account('pro');
    const batch = (n: number) => ({ events: Array.from({ length: 20 }, (_, i) => ({ event: 'custom.step.done', actor_id: `actor-${n}-${i}` })) });
    const sent = [0, 1, 2, 3].map((n) => postEvent(app, acct.secret, batch(n), '/v1/events/batch'));
    await waitingReaches(app, 3);
    // A body that is not JSON waits its turn too, and is refused as before.
    const notJson = postRaw(app, acct.secret, `{"event": ${'x'.repeat(2_000)}`);
    open();
    for (const res of await Promise.all(sent)) expect(res.statusCode).toBe(202);
    expectError(await notJson, 400, 'INVALID_JSON');
    expect(await waiting(app)).toBe(0);
    const stored = await allEvents(app, acct.secret);
    expect(stored).toHaveLength(80);
    // Newest first: the last batch admitted is the first listed.
    expect(stored[0]?.actor_id).toBe('actor-3-19');
    expect(stored[79]?.actor_id).toBe('actor-0-0');
  });

  it('gives the turn of a request refused while its body is read back: the next one is admitted', async () => {
    t = await roomyApp({ VIGIL_INGEST_IN_FLIGHT_BYTES: '1024' });
    const app = t;
    const acct = await app.account('pro');
    // Each is over the budget, so each is admitted only with nothing else in flight: a turn
    // that was not given back would keep every later request waiting.
    for (let i = 0; i < 3; i++) expectError(await postRaw(app, acct.secret, 'x'.repeat(1_500), 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await postRaw(app, acct.secret, `{"event": ${'x'.repeat(1_500)}`), 400, 'INVALID_JSON');
    const res = await postEvent(
      app,
      acct.secret,
      { events: Array.from({ length: 40 }, (_, i) => ({ event: 'custom.step.done', actor_id: `a-${i}` })) },
      '/v1/events/batch',
    );
    expect(res.statusCode).toBe(202);
    expect(await allEvents(app, acct.secret)).toHaveLength(40);
  });

  it('gives the turn of a client that went away while its request waited back', async () => {
    const { store, open, started } = gatedStore();
    t = await roomyApp(UNBOUNDED_WAIT, { store });
    const app = t;
    const acct = await app.account('pro');
    await app.vigil.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.vigil.app.server.address() as AddressInfo;
    const body = (tag: string) => JSON.stringify({ events: Array.from({ length: 20 }, (_, i) => ({ event: 'custom.step.done', actor_id: `${tag}-${i}` })) });
    const send = (tag: string) =>
      fetch(`http://127.0.0.1:${port}/v1/events/batch`, {
        method: 'POST',
        headers: { ...bearer(acct.secret), 'content-type': 'application/json' },
        body: body(tag),
      });
    const first = send('first');
    await until(() => started() > 0, 'the first batch committing');
    // The second request waits for admission, its body unread; then its client goes away.
    const gone = connect(port, '127.0.0.1');
    const text = body('gone');
    gone.write(
      `POST /v1/events/batch HTTP/1.1\r\nhost: x\r\nauthorization: ${bearer(acct.secret).authorization}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
    await waitingReaches(app, 1);
    gone.destroy();
    // Until the server has seen the connection close, the request would still be waiting.
    const server = app.vigil.app.server;
    const connections = () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    await until(async () => (await connections()) <= 1, 'the server seeing the client go away');
    open();
    expect((await first).status).toBe(202);
    // Over the budget on its own: admitted only once nothing is left in flight.
    const last = await send('last');
    expect(last.status).toBe(202);
    const stored = await allEvents(app, acct.secret);
    expect(stored.filter((e) => String(e.actor_id).startsWith('last-'))).toHaveLength(20);
  });
});

describe('ingestion over the admission bound', () => {
  let t: TestApp | undefined;
  let release = () => {};
  afterEach(() => {
    release();
    return t?.close();
  });

  it('answers requests past the bound 503 OVERLOADED at once; they store and count nothing, and their retries are stored once', async () => {
    // One batch in flight (each is over the 1 KiB budget, so admitted alone), one waiting, the rest refused.
    t = await roomyApp({ VIGIL_INGEST_IN_FLIGHT_BYTES: '1024', VIGIL_INGEST_MAX_WAITING: '1', VIGIL_INGEST_MAX_WAIT_MS: '60000' });
    const app = t;
    const acct = await app.account('pro');
    const other = await app.account('pro');
    expect((await app.vigil.app.inject({ method: 'GET', url: '/readyz' })).json().overloaded).toBe(false);
    const { open, started } = holdCommits(app.services.store);
    release = open;
    const event = (n: number, i: number) => ({ event: 'auth.login.failure', actor_id: `actor-${n}-${i}`, event_id: `evt-${n}-${i}`, ip: '203.0.113.7' });
    const batch = (n: number) => ({ events: Array.from({ length: 20 }, (_, i) => event(n, i)) });
    const sends = [0, 1, 2, 3, 4, 5].map((n) => ({ payload: batch(n), url: '/v1/events/batch' }));
    sends.push({ payload: event(6, 0) as never, url: '/v1/events' });
    const answers = sends.map((s) => postEvent(app, acct.secret, s.payload, s.url));
    const settled: number[] = [];
    answers.forEach((answer, k) => void answer.then(() => settled.push(k)));
    // Five answers come while the first batch's commit is held: the refused ones do not wait for it.
    await until(() => settled.length === 5, 'five requests answered while a commit is held');
    await until(() => started() === 1, 'the admitted batch committing');
    expect(settled).toHaveLength(5);
    const refused = settled.map((k) => ({ k, res: null as unknown as Awaited<(typeof answers)[number]> }));
    for (const r of refused) r.res = await (answers[r.k] as (typeof answers)[number]);
    for (const { res } of refused) {
      const body = expectError(res, 503, 'OVERLOADED');
      const seconds = Number(res.headers['retry-after']);
      expect(Number.isInteger(seconds) && seconds >= 1).toBe(true);
      expect(body.retry_after).toBe(seconds);
      expect(body.message).toContain(`${seconds} second`);
      // The rate-limit headers are there as on every answer, reporting both of the key's windows.
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
      expect(res.headers['ratelimit']).toMatch(/^"second";r=\d+;t=\d+, "minute";r=\d+;t=\d+$/);
    }
    // The single event is among them: whatever the route, nothing enters past the bound.
    expect(settled).toContain(6);
    expect(await metric(app, 'vigil_admission_rejected_total{reason="waiting_full"}')).toBe(5);
    const ready = await app.vigil.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().overloaded).toBe(true);
    // Other accounts' reads are not behind the bound.
    expect((await getJson(app, other.secret, '/v1/usage')).statusCode).toBe(200);

    open();
    const admitted = [0, 1, 2, 3, 4, 5, 6].filter((k) => !settled.includes(k));
    expect(admitted).toHaveLength(2);
    for (const k of admitted) expect((await answers[k])?.statusCode).toBe(202);
    const storedBefore = await allEvents(app, acct.secret);
    expect(storedBefore).toHaveLength(40);
    expect(await usedThisMonth(app, acct.secret)).toBe(40);

    // The refused requests again, with the same event ids: each accepted, stored once.
    for (const { k } of refused) {
      const s = sends[k] as (typeof sends)[number];
      const res = await postEvent(app, acct.secret, s.payload, s.url);
      expect(res.statusCode).toBe(202);
      expect(res.headers['idempotent-replay']).toBeUndefined();
    }
    const stored = await allEvents(app, acct.secret);
    expect(stored).toHaveLength(6 * 20 + 1);
    expect(new Set(stored.map((e) => e.event_id)).size).toBe(6 * 20 + 1);
    expect(await usedThisMonth(app, acct.secret)).toBe(6 * 20 + 1);
    // The key's windows counted the seven requests that were admitted, and their 121 events, not the refused ones.
    const last = await postEvent(app, acct.secret, { event: 'auth.login.success', actor_id: 'last' });
    expect(last.statusCode).toBe(202);
    const [second, minute] = windowsUsed(last.headers['ratelimit'] as string, last.headers['ratelimit-policy'] as string);
    expect(second).toBe(2 + 5 + 1);
    expect(minute).toBe(6 * 20 + 1 + 1);
  });

  it("refuses the flooding account's requests past its share, and admits another account's in the next turn", async () => {
    // One batch in flight (each is over the 1 KiB budget), four places to wait: half for an account alone.
    t = await roomyApp({ VIGIL_INGEST_IN_FLIGHT_BYTES: '1024', VIGIL_INGEST_MAX_WAITING: '4', VIGIL_INGEST_MAX_WAIT_MS: '60000' });
    const app = t;
    const flooding = await app.account('pro');
    const quiet = await app.account('pro');
    const { open, started } = holdCommits(app.services.store);
    release = open;
    const batch = (tag: string, n: number) => ({
      events: Array.from({ length: 20 }, (_, i) => ({ event: 'custom.step.done', actor_id: `${tag}-${n}-${i}`, event_id: `${tag}-${n}-${i}` })),
    });
    const floods = [0, 1, 2, 3, 4, 5].map((n) => postEvent(app, flooding.secret, batch('flood', n), '/v1/events/batch'));
    const answered: number[] = [];
    floods.forEach((answer, k) => void answer.then(() => answered.push(k)));
    await until(() => answered.length === 3, "the flooding account's requests past its share answered");
    await until(() => started() === 1, 'the first batch committing');
    for (const k of answered) expectError(await (floods[k] as (typeof floods)[number]), 503, 'OVERLOADED');
    expect(await metric(app, 'vigil_admission_rejected_total{reason="account_share"}')).toBe(3);
    // The other account's batch finds a place, though the flooding one sent first.
    const quietAnswer = postEvent(app, quiet.secret, batch('quiet', 0), '/v1/events/batch');
    await until(async () => (await metric(app, 'vigil_ingest_admission_waiting')) === 3, 'three requests waiting');
    open();
    expect((await quietAnswer).statusCode).toBe(202);
    for (const [k, answer] of floods.entries()) if (!answered.includes(k)) expect((await answer).statusCode).toBe(202);
    expect(await allEvents(app, quiet.secret)).toHaveLength(20);
    expect(await allEvents(app, flooding.secret)).toHaveLength(3 * 20);
  });
});

/** How much of the key's second (requests) and minute (events) windows is used, from the RateLimit and RateLimit-Policy headers. */
function windowsUsed(rateLimit: string, policy: string): [number, number] {
  const param = (header: string, name: string, key: string) =>
    Number(
      header
        .split(', ')
        .find((item) => item.startsWith(`"${name}";`))
        ?.split(';')
        .find((p) => p.startsWith(`${key}=`))
        ?.slice(key.length + 1),
    );
  return [param(policy, 'second', 'q') - param(rateLimit, 'second', 'r'), param(policy, 'minute', 'q') - param(rateLimit, 'minute', 'r')];
}

/** Holds the commits of any store (the embedded one or PostgreSQL) until `open` is called. */
function holdCommits(store: Store) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const commit = store.commit.bind(store);
  let started = 0;
  store.commit = async (batch: CommitBatch, options) => {
    started++;
    await gate;
    return commit(batch, options);
  };
  return { open, started: () => started };
}

async function metric(app: TestApp, series: string): Promise<number> {
  const text = (await app.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.slice(series.length + 1));
}

/** An embedded store whose commits wait until `open` is called. */
function gatedStore() {
  const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  return { store, ...holdCommits(store) };
}

async function waiting(app: TestApp): Promise<number> {
  const text = (await app.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(/^vigil_ingest_admission_waiting (\d+)$/m.exec(text)?.[1]);
}

function waitingReaches(app: TestApp, n: number): Promise<void> {
  return until(async () => (await waiting(app)) === n, `${n} requests waiting for admission`);
}
