import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { IngestAdmission } from '../../src/http/ingest-admission.js';
import { openSqliteStore } from '../../src/storage/sqlite.js';
import type { CommitBatch } from '../../src/storage/types.js';
import { bearer, SCALE_OUT, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { allEvents, expectError, postEvent, postRaw, roomyApp } from './support.js';

describe('IngestAdmission', () => {
  it('admits up to its budget, then first come first served as earlier requests leave', async () => {
    const admission = new IngestAdmission(100);
    const order: string[] = [];
    expect(admission.enter(60)).toBeUndefined();
    expect(admission.enter(40)).toBeUndefined();
    const third = admission.enter(10);
    const fourth = admission.enter(5);
    expect(third).toBeInstanceOf(Promise);
    expect(fourth).toBeInstanceOf(Promise);
    void third?.then(() => order.push('third'));
    void fourth?.then(() => order.push('fourth'));
    // A small body behind a waiting one waits too: the queue keeps its order.
    expect(admission.enter(1)).toBeInstanceOf(Promise);
    expect(admission.queued).toBe(3);
    admission.leave(40);
    await Promise.resolve();
    expect(order).toEqual(['third', 'fourth']);
    expect(admission.bytesInFlight).toBe(60 + 10 + 5 + 1);
    expect(admission.queued).toBe(0);
  });

  it('admits a body larger than the budget when nothing else is in flight', async () => {
    const admission = new IngestAdmission(10);
    expect(admission.enter(1_000)).toBeUndefined();
    const next = admission.enter(1_000);
    expect(next).toBeInstanceOf(Promise);
    let entered = false;
    void next?.then(() => (entered = true));
    admission.leave(1_000);
    await next;
    expect(entered).toBe(true);
    expect(admission.bytesInFlight).toBe(1_000);
  });

  it('keeps its order through a long queue that never drains completely', async () => {
    const admission = new IngestAdmission(1);
    expect(admission.enter(1)).toBeUndefined();
    const entered: number[] = [];
    for (let i = 0; i < 5_000; i++) void admission.enter(1)?.then(() => entered.push(i));
    for (let i = 0; i < 4_000; i++) admission.leave(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(entered).toEqual(Array.from({ length: 4_000 }, (_, i) => i));
    expect(admission.queued).toBe(1_000);
    for (let i = 0; i < 1_000; i++) admission.leave(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(entered).toHaveLength(5_000);
    expect(entered[4_999]).toBe(4_999);
  });
});

// The gate holds commits of the embedded store; scaled out, the store is PostgreSQL's.
describe.skipIf(SCALE_OUT)('ingestion beyond the admission budget', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.close());

  it('queues bodies past the budget, answers every request and stores every event, in arrival order', async () => {
    const { store, open } = gatedStore();
    // The smallest budget: one batch is admitted, the rest wait for it to commit.
    t = await roomyApp({ VIGIL_INGEST_IN_FLIGHT_BYTES: '1024' }, { store });
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
    t = await roomyApp({ VIGIL_INGEST_IN_FLIGHT_BYTES: '1024' }, { store });
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

/** An embedded store whose commits wait until `open` is called. */
function gatedStore() {
  const store = openSqliteStore({ dataDir: ':memory:', synchronous: 'normal' });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const commit = store.commit.bind(store);
  let started = 0;
  store.commit = async (batch: CommitBatch, options) => {
    started++;
    await gate;
    return commit(batch, options);
  };
  return { store, open, started: () => started };
}

async function waiting(app: TestApp): Promise<number> {
  const text = (await app.vigil.app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(/^vigil_ingest_admission_waiting (\d+)$/m.exec(text)?.[1]);
}

function waitingReaches(app: TestApp, n: number): Promise<void> {
  return until(async () => (await waiting(app)) === n, `${n} requests waiting for admission`);
}
