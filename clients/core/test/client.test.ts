import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { uuidv7, VigilClient, type ClientOptions, type VigilEvent } from '../src/index.js';
import { DEFAULT_API_KEY, FakeClock } from './harness.js';
import { startScriptedServer, type Running } from './processes.js';

describe('client core over real HTTP (scripted server)', () => {
  let server: Running<{ port: number }>;
  let url: string;
  beforeAll(async () => {
    server = await startScriptedServer();
    url = `http://127.0.0.1:${server.info.port}`;
  });
  afterAll(() => server.stop());
  beforeEach(async () => {
    await fetch(`${url}/__reset`, { method: 'POST' });
  });
  const script = (responses: object[]) => fetch(`${url}/__script`, { method: 'POST', body: JSON.stringify({ responses }) });
  const requests = async () =>
    ((await (await fetch(`${url}/__requests`)).json()) as { requests: { path: string; headers: Record<string, string> }[] }).requests;
  const client = (options: Partial<ClientOptions> = {}) => new VigilClient({ apiKey: DEFAULT_API_KEY, baseUrl: url, clock: new FakeClock(), ...options });

  it('backs off between retries with jitter inside [½, 1] × 200 ms × 2^attempt', async () => {
    const delays: number[] = [];
    const random = [0, 1, 0.5];
    const c = client({ maxRetries: 3, sleep: async (ms) => void delays.push(ms), random: () => random.shift() ?? 0 });
    await script([{ status: 500 }, { status: 502 }, { status: 503 }, { status: 504 }]);
    expect((await c.track({ event: 'auth.login.failure' })).outcome).toBe('failed');
    expect(delays).toEqual([100, 400, 600]);
    expect(await requests()).toHaveLength(4);
  });

  it('waits out an overload pause instead of the backoff, and tells onError of the events it gives up', async () => {
    const delays: number[] = [];
    const errors: string[] = [];
    const clock = new FakeClock();
    const c = client({ clock, sleep: async (ms) => void delays.push(ms), onError: (e) => void errors.push(`${e.outcome} ${e.status}`) });
    const overloaded = (seconds: number) => ({ status: 503, headers: { 'Retry-After': String(seconds) }, body: { error: 'OVERLOADED', retry_after: seconds } });
    await script([overloaded(2), overloaded(30)]);
    expect(await c.track({ event: 'auth.login.failure' })).toMatchObject({ outcome: 'failed', status: 503 });
    // The first pause (2 s) fits the 2 s timeout: waited through the sleep; the second (30 s) does not.
    expect(delays).toEqual([2000]);
    expect(await c.track({ event: 'auth.login.failure' })).toMatchObject({ outcome: 'failed', status: null });
    expect(await requests()).toHaveLength(2);
    expect(errors).toEqual(['failed 503', 'failed null']);
    expect(c.stats()).toMatchObject({ sent: 1, failed: 2, retries: 1, dropped: 0, inCooldown: false });
  });

  it('jitter spreads the delays of many clients', async () => {
    const delays = new Set<number>();
    for (let i = 0; i < 5; i++) {
      await script([{ status: 503 }]);
      await client({ maxRetries: 1, sleep: async (ms) => void delays.add(Math.round(ms)) }).track({ event: 'auth.login.failure' });
    }
    expect(delays.size).toBeGreaterThan(1);
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(100);
      expect(d).toBeLessThanOrEqual(200);
    }
  });

  it('never throws: an event that cannot be serialised, or is not an object, is a rejected value', async () => {
    const circular: VigilEvent = { event: 'custom.test.loop' };
    circular.self = circular;
    const c = client();
    await expect(c.track(circular)).resolves.toMatchObject({ outcome: 'rejected', status: null });
    await expect(c.track(null as unknown as VigilEvent)).resolves.toMatchObject({ outcome: 'rejected' });
    await expect(c.trackBatch([{ event: 'a.b' }, 'x' as unknown as VigilEvent])).resolves.toMatchObject({ rejected: 2 });
    await expect(c.trackBatch(undefined as unknown as VigilEvent[])).resolves.toMatchObject({ rejected: 0 });
    expect(await requests()).toHaveLength(0);
    expect(c.stats().rejected).toBe(4);
  });

  it('buffered mode: an event that cannot be serialised is refused at once and later events still go out', async () => {
    const circular: VigilEvent = { event: 'custom.test.loop' };
    circular.self = circular;
    const c = client({ mode: 'buffered', bufferSize: 2 });
    expect((await c.track(circular)).outcome).toBe('rejected');
    await c.track({ event: 'auth.login.success', actor_id: 'a' });
    await c.track({ event: 'auth.login.success', actor_id: 'b' });
    await c.idle();
    const sent = await requests();
    expect(sent.map((r) => r.path)).toEqual(['/v1/events/batch']);
    expect(c.stats()).toMatchObject({ rejected: 1, accepted: 2 });
  });

  it('buffered mode sends the event as it was when tracked, not as the caller changed it later', async () => {
    const c = client({ mode: 'buffered', bufferSize: 10 });
    const event: VigilEvent = { event: 'auth.login.success', metadata: { step: 1 } };
    await c.track(event);
    (event.metadata as { step: number }).step = 2;
    await c.flush();
    const [request] = (await requests()) as unknown as { body: { events: VigilEvent[] } }[];
    expect(request?.body.events[0]?.metadata).toEqual({ step: 1 });
  });

  it('a transport that throws is a network error, not an exception', async () => {
    const c = client({
      maxRetries: 1,
      sleep: async () => undefined,
      send: () => {
        throw new Error('boom');
      },
    });
    await expect(c.track({ event: 'auth.login.failure' })).resolves.toMatchObject({ outcome: 'failed', status: null });
    expect(c.stats()).toMatchObject({ failed: 1, retries: 1 });
  });

  it('a service that is not listening is a failed delivery after the retries, not an exception', async () => {
    const c = new VigilClient({ apiKey: DEFAULT_API_KEY, baseUrl: 'http://127.0.0.1:9', sleep: async () => undefined, maxRetries: 1 });
    await expect(c.track({ event: 'auth.login.failure' })).resolves.toMatchObject({ outcome: 'failed', status: null });
    expect(c.stats()).toMatchObject({ failed: 1, retries: 1 });
  });

  it('sends JSON with the key as a bearer token', async () => {
    await client().track({ event: 'auth.login.failure' });
    const [request] = await requests();
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBe(`Bearer ${DEFAULT_API_KEY}`);
  });

  it('close() sends what a buffered client holds', async () => {
    const c = client({ mode: 'buffered', bufferSize: 50 });
    await c.track({ event: 'auth.login.success' });
    await c.track({ event: 'auth.login.success' });
    expect(await requests()).toHaveLength(0);
    await c.close();
    expect((await requests()).map((r) => r.path)).toEqual(['/v1/events/batch']);
  });

  it('a fire-and-forget caller does not wait, and idle() says when delivery is done', async () => {
    const c = client();
    await script([{ status: 202, delay_ms: 300 }]);
    let done = false;
    void c.track({ event: 'auth.login.success' }).then(() => (done = true));
    expect(done).toBe(false);
    await c.idle();
    expect(done).toBe(true);
    expect(c.stats().accepted).toBe(1);
  });
});

describe('event ids', () => {
  it('are UUID version 7, unique, and sort by creation time', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => uuidv7(1_800_000_000_000 + i));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(uuidv7(0x0123456789ab).slice(0, 13)).toBe('01234567-89ab');
  });
});
