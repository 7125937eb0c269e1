import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VERSION, Vigil, VigilError } from '../src/index.js';
import { DEFAULT_API_KEY, FakeClock } from '../../core/test/harness.js';
import { startScriptedServer, type Running } from '../../core/test/processes.js';

const FREE = '"second";q=5;w=1, "minute";q=30;w=60';

/** The Node client's own API (User-Agent, error hook, opt-in rejections, close with a timeout) against the kit's scripted server. */
describe('Node client API', () => {
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
  const client = (options: Partial<ConstructorParameters<typeof Vigil>[0]> = {}) =>
    new Vigil({ apiKey: DEFAULT_API_KEY, baseUrl: url, clock: new FakeClock(), sleep: async () => undefined, ...options });

  it('identifies itself as vigil-node/<version>, the version of its package.json', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    await client().track({ event: 'auth.login.success' });
    const [request] = await requests();
    expect(request?.headers['user-agent']).toBe(`vigil-node/${pkg.version}`);
  });

  it('a result carries the score breakdown', async () => {
    await script([
      {
        status: 202,
        body: {
          id: 'evt_1',
          status: 'accepted',
          risk: {
            score: 25,
            level: 'medium',
            action: 'allow',
            breakdown: [
              { source: 'base', points: 10 },
              { source: 'network.scanner_user_agent', points: 15 },
            ],
          },
        },
      },
    ]);
    const result = await client().track({ event: 'auth.login.failure' });
    expect(result.risk).toEqual({
      score: 25,
      level: 'medium',
      action: 'allow',
      breakdown: [
        { source: 'base', points: 10 },
        { source: 'network.scanner_user_agent', points: 15 },
      ],
    });
  });

  it('onError hears of every event not delivered; a hook that throws changes nothing', async () => {
    const heard: VigilError[] = [];
    const vigil = client({
      maxRetries: 0,
      onError: (err) => {
        heard.push(err);
        throw new Error('the hook fails');
      },
    });
    await script([{ status: 400 }, { status: 500 }, { status: 202 }]);
    expect((await vigil.track({ event: 'auth.login.failure', actor_id: 'a' })).outcome).toBe('rejected');
    expect((await vigil.track({ event: 'auth.login.failure', actor_id: 'b' })).outcome).toBe('failed');
    expect((await vigil.track({ event: 'auth.login.failure', actor_id: 'c' })).outcome).toBe('accepted');
    expect(heard.map((e) => [e.outcome, e.status, e.count, e instanceof VigilError])).toEqual([
      ['rejected', 400, 1, true],
      ['failed', 500, 1, true],
    ]);
    expect(heard[0]?.eventId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('throwOnError: track rejects with a VigilError when the event was not delivered, and resolves when it was', async () => {
    const vigil = client({ throwOnError: true });
    await script([{ status: 202 }, { status: 429 }]);
    await expect(vigil.track({ event: 'auth.login.success' })).resolves.toMatchObject({ outcome: 'accepted' });
    await expect(vigil.track({ event: 'auth.login.success' })).rejects.toMatchObject({ name: 'VigilError', outcome: 'rate_limited', status: 429 });
    const batch = vigil.trackBatch([{ event: 'auth.login.success' }, { event: 'auth.login.success' }]);
    await expect(batch).rejects.toBeInstanceOf(VigilError);
    await expect(batch).rejects.toMatchObject({ outcome: 'dropped', count: 2, batch: { dropped: 2 } });
  });

  it('close({ timeoutMs }) resolves false when the service does not answer in time, true when everything went out', async () => {
    const clock = new FakeClock();
    const slow = client({ clock, mode: 'buffered', timeoutMs: 5_000 });
    await script([{ status: 202, delay_ms: 1_500 }]);
    await slow.track({ event: 'auth.login.success' });
    const closing = slow.close({ timeoutMs: 100 });
    // The timeout runs on the client's clock: the fake one moves on while the request is in flight.
    await new Promise((resolve) => setTimeout(resolve, 50));
    clock.advance(100);
    expect(await closing).toBe(false);
    await slow.idle();
    expect(slow.stats().accepted).toBe(1);
    const quick = client({ mode: 'buffered' });
    await quick.track({ event: 'auth.login.success' });
    expect(await quick.close({ timeoutMs: 1_000 })).toBe(true);
    expect(quick.stats().accepted).toBe(1);
  });

  it('a burst of concurrent calls on the Free policy: one request before the policy is known, then 5 a second; the rest dropped and counted, no 429', async () => {
    await script(Array.from({ length: 7 }, () => ({ status: 202, headers: { 'RateLimit-Policy': FREE } })));
    const vigil = client();
    const results = await Promise.all(Array.from({ length: 7 }, (_, i) => vigil.track({ event: 'auth.login.success', actor_id: `u${i}` })));
    expect(results.map((r) => r.outcome)).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'dropped', 'dropped']);
    expect(await requests()).toHaveLength(5);
    expect(vigil.stats()).toMatchObject({ sent: 5, accepted: 5, dropped: 2, pacedDropped: 2, rateLimited: 0, inCooldown: false });
  });
});
