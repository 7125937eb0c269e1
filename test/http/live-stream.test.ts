import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { connectTestRedis, describeWithRedis, REDIS_URL } from '../limits/redis-helper.js';
import { expectError, roomyApp } from './support.js';
import { team } from './team-support.js';

interface Frame {
  readonly event: string;
  readonly data: unknown;
}

/** A live stream read from a real port, frame by frame, as a browser's EventSource reads it. */
interface Stream {
  readonly status: number;
  /** The next frame named `name` (frames of other names before it are skipped). */
  next(name: string): Promise<Frame>;
  close(): void;
}

async function openStream(base: string, headers: Record<string, string>, query = ''): Promise<Stream> {
  const abort = new AbortController();
  const res = await fetch(`${base}/v1/stream${query}`, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (res.status !== 200 || res.body === null) {
    const body = await res.text();
    return { status: res.status, next: () => Promise.reject(new Error(body)), close: () => abort.abort() };
  }
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const frames: Frame[] = [];
  const read = async (): Promise<Frame> => {
    for (;;) {
      const frame = frames.shift();
      if (frame) return frame;
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        const text = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (text.startsWith(':')) continue;
        const name = /^event: (.*)$/m.exec(text)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(text)?.[1];
        frames.push({ event: name, data: data === undefined ? undefined : JSON.parse(data) });
      }
    }
  };
  return {
    status: res.status,
    async next(name) {
      for (;;) {
        const frame = await read();
        if (frame.event === name) return frame;
      }
    },
    close: () => abort.abort(),
  };
}

/** The stream is subscribed once its `ready` frame came. */
async function subscribed(base: string, headers: Record<string, string>, query = ''): Promise<Stream> {
  const stream = await openStream(base, headers, query);
  expect(stream.status).toBe(200);
  expect((await stream.next('ready')).data).toMatchObject({ kinds: expect.any(Array) });
  return stream;
}

const listen = async (t: TestApp): Promise<string> => {
  await t.vigil.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.vigil.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
};

/** The client's pooled keep-alive connections would hold the server's close until they time out. */
const dropConnections = (t: TestApp | undefined) => t?.vigil.app.server.closeAllConnections();

const ingest = async (t: TestApp, key: string, events: Record<string, unknown>[]) => {
  const res = await t.vigil.app.inject({ method: 'POST', url: '/v1/events/batch', headers: bearer(key), payload: { events } });
  expect(res.statusCode, res.body).toBe(202);
};

describe('GET /v1/stream', () => {
  let t: TestApp;
  let base: string;
  let acct: { id: string; secret: string };
  let other: { id: string; secret: string };
  const people = team(() => t);

  beforeAll(async () => {
    t = await roomyApp();
    base = await listen(t);
    acct = await t.account('pro');
    other = await t.account('pro');
  });
  afterAll(async () => {
    dropConnections(t);
    await t?.close();
  });

  it("sends the account's new events and alerts, never another account's", async () => {
    const created = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/threat-models',
      headers: bearer(acct.secret),
      payload: { name: 'Export', match: { event: 'custom.stream.export' }, outcome: { alert: 'custom.stream_export', severity: 'high' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const stream = await subscribed(base, bearer(acct.secret));
    const alerts = await subscribed(base, bearer(acct.secret), '?kinds=alerts');
    try {
      // Another account's event is committed first: had it reached the stream, it would come first.
      await ingest(t, other.secret, [{ event: 'custom.stream.export', actor_id: 'theirs' }]);
      await ingest(t, acct.secret, [{ event: 'custom.stream.export', actor_id: 'ours' }]);
      const event = (await stream.next('event')).data as Record<string, unknown>;
      expect(event).toMatchObject({ event: 'custom.stream.export', actor_id: 'ours', id: expect.stringMatching(/^evt_/) });
      expect((event.risk as { score: number }).score).toEqual(expect.any(Number));
      // The event as GET /v1/events answers it.
      const read = await t.vigil.app.inject({ method: 'GET', url: `/v1/events/${String(event.id)}`, headers: bearer(acct.secret) });
      expect(read.json()).toEqual(event);
      const alert = (await stream.next('alert')).data;
      expect(alert).toMatchObject({ type: 'custom.stream_export', severity: 'high', status: 'open', change: 'opened', subject: 'actor:ours' });
      expect(alert).toEqual((await alerts.next('alert')).data);
      // The alerts-only stream saw no event frame before its alert, or it would have skipped it: the next ingested alert is a sighting.
      await ingest(t, acct.secret, [{ event: 'custom.stream.export', actor_id: 'ours' }]);
      const sighting = (await alerts.next('alert')).data as Record<string, unknown>;
      expect(sighting).toMatchObject({ change: 'sighted', count: 2 });
      expect(sighting.status).toBeUndefined();
    } finally {
      stream.close();
      alerts.close();
    }
  });

  it('applies the type and min_risk filters', async () => {
    const stream = await subscribed(base, bearer(acct.secret), '?kinds=events&type=custom.keep.*');
    try {
      await ingest(t, acct.secret, [
        { event: 'custom.skip', actor_id: 'f1' },
        { event: 'custom.keep.this', actor_id: 'f2' },
      ]);
      expect((await stream.next('event')).data).toMatchObject({ event: 'custom.keep.this' });
    } finally {
      stream.close();
    }
    // An event a model adds its severity's points to is riskier than one nothing fires on.
    const created = await t.vigil.app.inject({
      method: 'POST',
      url: '/v1/threat-models',
      headers: bearer(acct.secret),
      payload: { name: 'Risky', match: { event: 'custom.stream.risky' }, outcome: { alert: 'custom.stream_risky', severity: 'critical' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const any = await subscribed(base, bearer(acct.secret), '?kinds=events');
    const risky = await subscribed(base, bearer(acct.secret), '?kinds=events&min_risk=30');
    try {
      await ingest(t, acct.secret, [
        { event: 'custom.calm', actor_id: 'f3' },
        { event: 'custom.stream.risky', actor_id: 'f4' },
      ]);
      const score = (f: Frame) => ((f.data as { risk: { score: number } }).risk as { score: number }).score;
      const [calm, high] = [await any.next('event'), await any.next('event')] as [Frame, Frame];
      expect(score(calm)).toBeLessThan(30);
      expect(score(high)).toBeGreaterThanOrEqual(30);
      expect((await risky.next('event')).data).toEqual(high.data);
    } finally {
      risky.close();
      any.close();
    }
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/v1/stream?kinds=everything', headers: bearer(acct.secret) }), 400, 'INVALID_REQUEST');
  });

  it('applies a search in the lists’ grammar: fields, wildcards, CIDR, ranges, NOT and free text', async () => {
    const q = encodeURIComponent('actor_id:keep* ip:198.51.100.0/24 -type:custom.noise risk:<=100 (request.path:/admin* OR transfer)');
    const stream = await subscribed(base, bearer(acct.secret), `?kinds=events&q=${q}`);
    try {
      await ingest(t, acct.secret, [
        { event: 'custom.a', actor_id: 'skip-1', ip: '198.51.100.7', request: { path: '/admin/x' } },
        { event: 'custom.a', actor_id: 'keep-1', ip: '203.0.113.7', request: { path: '/admin/x' } },
        { event: 'custom.noise', actor_id: 'keep-2', ip: '198.51.100.8', request: { path: '/admin/x' } },
        { event: 'custom.a', actor_id: 'keep-3', ip: '198.51.100.9', request: { path: '/home' } },
        { event: 'custom.a', actor_id: 'keep-4', ip: '198.51.100.10', request: { path: '/admin/users' } },
        { event: 'custom.a', actor_id: 'keep-5', ip: '198.51.100.11', metadata: { note: 'wire transfer approved' } },
      ]);
      expect((await stream.next('event')).data).toMatchObject({ actor_id: 'keep-4' });
      expect((await stream.next('event')).data).toMatchObject({ actor_id: 'keep-5' });
    } finally {
      stream.close();
    }
    expectError(
      await t.vigil.app.inject({ method: 'GET', url: '/v1/stream?kinds=events&q=actor_id%3A', headers: bearer(acct.secret) }),
      400,
      'INVALID_REQUEST',
    );
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/v1/stream?kinds=alerts&q=risk%3A5', headers: bearer(acct.secret) }), 400, 'INVALID_REQUEST');
  });

  it('a tag: term and free text match the same events on the stream as on the list', async () => {
    // An API request to a logout path is classified by it: tagged inferred:auth.logout.
    const q = encodeURIComponent('tag:"inferred:auth.logout" OR (tag:inferred:* actor_id:never) OR stream-tag-words-7');
    const stream = await subscribed(base, bearer(acct.secret), `?kinds=events&q=${q}`);
    try {
      await ingest(t, acct.secret, [
        { event: 'api.request', actor_id: 'tag-skip', request: { method: 'POST', path: '/home', status: 200 } },
        { event: 'api.request', actor_id: 'tag-keep', request: { method: 'POST', path: '/logout', status: 200 } },
        { event: 'custom.words', actor_id: 'words-keep', metadata: { deep: { note: 'stream-tag-words-7' } } },
      ]);
      const tagged = (await stream.next('event')).data as { id: string; actor_id: string; tags: string[] };
      expect(tagged).toMatchObject({ actor_id: 'tag-keep', tags: expect.arrayContaining(['inferred:auth.logout']) });
      // Nested metadata text is in the stored row's free text, so the stream finds it too.
      const worded = (await stream.next('event')).data as { id: string };
      expect(worded).toMatchObject({ actor_id: 'words-keep' });
      const listed = await t.vigil.app.inject({ method: 'GET', url: `/v1/events?limit=50&q=${q}`, headers: bearer(acct.secret) });
      expect(listed.statusCode, listed.body).toBe(200);
      expect((listed.json().data as { id: string }[]).map((e) => e.id).sort()).toEqual([tagged.id, worded.id].sort());
    } finally {
      stream.close();
    }
  });

  it('refuses the sixth open stream of an account with 429, and a closed stream frees its slot', async () => {
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await subscribed(base, bearer(acct.secret)));
    try {
      const sixth = await t.vigil.app.inject({ method: 'GET', url: '/v1/stream', headers: bearer(acct.secret) });
      expectError(sixth, 429, 'RATE_LIMITED');
      expect(sixth.headers['retry-after']).toBeDefined();
      // Another account's slots are its own.
      const theirs = await subscribed(base, bearer(other.secret));
      theirs.close();
      streams.shift()?.close();
      let again: Stream | undefined;
      await until(async () => {
        const s = await openStream(base, bearer(acct.secret));
        if (s.status === 200) again = s;
        else s.close();
        return again !== undefined;
      }, 'a slot freed by the closed stream');
      if (again) streams.push(again);
    } finally {
      for (const s of streams) s.close();
      await until(() => t.services.live?.listening(acct.id) === false, 'the streams closed');
    }
  });

  it('takes a key with the read scope and a dashboard session, and refuses a key that may only ingest', async () => {
    const reader = await t.vigil.accounts.createKey(acct.id, 'secret', [], { scopes: ['read'] });
    const sender = await t.vigil.accounts.createKey(acct.id, 'secret', [], { scopes: ['ingest'] });
    if (!reader.ok || !sender.ok) throw new Error('key creation failed');
    (await subscribed(base, bearer(reader.value.key))).close();
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/v1/stream', headers: bearer(sender.value.key) }), 403, 'FORBIDDEN');
    expectError(await t.vigil.app.inject({ method: 'GET', url: '/v1/stream' }), 401, 'UNAUTHORIZED');
    await people.add(acct.id, 'viewer@stream.test', 'viewer');
    const session = await people.session('viewer@stream.test');
    const stream = await subscribed(base, { cookie: session.cookie });
    try {
      await ingest(t, acct.secret, [{ event: 'custom.for.viewer', actor_id: 'v1' }]);
      expect((await stream.next('event')).data).toMatchObject({ event: 'custom.for.viewer' });
    } finally {
      stream.close();
    }
  });
});

const redis = await connectTestRedis('http-live-stream');

describeWithRedis('live streams on two instances sharing the store and Redis', redis, ({ prefix }) => {
  let a: TestApp;
  let b: TestApp;
  let baseA: string;
  let baseB: string;
  let acct: { id: string; secret: string };
  let other: { id: string; secret: string };

  beforeAll(async () => {
    const env = { VIGIL_REDIS_URL: REDIS_URL, VIGIL_REDIS_PREFIX: prefix };
    a = await roomyApp(env);
    b = await roomyApp(env, { store: a.services.store, clock: a.clock });
    for (const t of [a, b]) await until(() => t.services.redisHealth?.degraded === false, 'Redis connected');
    baseA = await listen(a);
    baseB = await listen(b);
    acct = await a.account('pro');
    other = await a.account('pro');
  });
  // b shares a's store: close b's app only and leave the store to a.
  afterAll(async () => {
    dropConnections(a);
    dropConnections(b);
    await b?.vigil.close();
    await b?.services.live?.close();
    await a?.close();
  });

  it('an event ingested on one instance reaches a stream on the other, and no other account’s stream', async () => {
    const onB = await subscribed(baseB, bearer(acct.secret));
    const theirs = await subscribed(baseB, bearer(other.secret));
    try {
      await until(() => a.services.live?.listening(acct.id) === true, 'instance a knows of the stream on b');
      await ingest(a, acct.secret, [{ event: 'custom.across', actor_id: 'x1' }]);
      expect((await onB.next('event')).data).toMatchObject({ event: 'custom.across', actor_id: 'x1' });
      // The other account's stream gets its own account's event, and never the one before it.
      await until(() => a.services.live?.listening(other.id) === true, 'instance a knows of the other stream');
      await ingest(a, other.secret, [{ event: 'custom.theirs', actor_id: 'x2' }]);
      expect((await theirs.next('event')).data).toMatchObject({ event: 'custom.theirs', actor_id: 'x2' });
    } finally {
      onB.close();
      theirs.close();
    }
  });

  it('counts an account’s open streams over both instances', async () => {
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await subscribed(i % 2 === 0 ? baseA : baseB, bearer(acct.secret)));
    try {
      expectError(await b.vigil.app.inject({ method: 'GET', url: '/v1/stream', headers: bearer(acct.secret) }), 429, 'RATE_LIMITED');
      expectError(await a.vigil.app.inject({ method: 'GET', url: '/v1/stream', headers: bearer(acct.secret) }), 429, 'RATE_LIMITED');
      streams.shift()?.close();
      let again: Stream | undefined;
      await until(async () => {
        const s = await openStream(baseB, bearer(acct.secret));
        if (s.status === 200) again = s;
        else s.close();
        return again !== undefined;
      }, 'a slot freed on the other instance');
      if (again) streams.push(again);
    } finally {
      for (const s of streams) s.close();
    }
  });
});
