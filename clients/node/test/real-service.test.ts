import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Vigil, type VigilEvent } from '../src/index.js';
import { startRealService, type RealService, type Running } from '../../core/test/processes.js';

/** The Node client against the real service on a free port (SQLite, real limits). */
describe('Node client against the real service', () => {
  let service: Running<RealService>;
  beforeAll(async () => {
    service = await startRealService(['--plan', 'pro', '--plan', 'free', '--plan', 'free', '--plan', 'free']);
  });
  afterAll(() => service.stop());

  const key = (label: string) => service.info.accounts[label]!.secret;
  const read = async (label: string, path: string) =>
    (await fetch(service.info.base + path, { headers: { authorization: `Bearer ${key(label)}` } })).json() as Promise<Record<string, unknown>>;
  const client = (label: string, extra: Partial<ConstructorParameters<typeof Vigil>[0]> = {}) =>
    new Vigil({ apiKey: key(label), baseUrl: service.info.base, ...extra });

  it('single event: 202 with the risk decision, stored under the event_id the client added', async () => {
    const vigil = client('pro');
    const result = await vigil.track({ event: 'auth.mfa.bypass_attempted', actor_id: 'alice', ip: '203.0.113.7' });
    expect(result).toMatchObject({ outcome: 'accepted', status: 202 });
    expect(result.risk).toEqual({ score: expect.any(Number), level: expect.any(String), action: expect.any(String), breakdown: expect.any(Array) });
    expect(result.risk!.breakdown.reduce((sum, c) => sum + c.points, 0)).toBeGreaterThan(0);
    expect(result.risk!.score).toBeGreaterThanOrEqual(40);
    const list = (await read('pro', '/v1/events?actor_id=alice')).data as { id: string }[];
    expect(list).toHaveLength(1);
    // The same event again (same event_id) is answered but not stored twice.
    const again = await vigil.track({ event: 'auth.mfa.bypass_attempted', actor_id: 'alice', ip: '203.0.113.7', event_id: result.eventId });
    expect(again.outcome).toBe('accepted');
    expect((await read('pro', '/v1/events?actor_id=alice')).data).toHaveLength(1);
  });

  it('batch on Pro: 250 events in chunks of 100, all stored', async () => {
    const vigil = client('pro', { batchSize: 100 });
    const events: VigilEvent[] = Array.from({ length: 250 }, (_, i) => ({ event: 'data.accessed', actor_id: 'batcher', metadata: { n: i } }));
    expect(await vigil.trackBatch(events)).toEqual({ accepted: 250, rejected: 0, failed: 0, rateLimited: 0, dropped: 0, buffered: 0 });
    const usage = await read('pro', '/v1/usage');
    expect(usage.used).toBe(250 + 1);
  });

  it('batch on Free: the 403 of the batch endpoint falls back to single events', async () => {
    const vigil = client('free');
    const result = await vigil.trackBatch([
      { event: 'auth.login.success', actor_id: 'f1' },
      { event: 'auth.login.success', actor_id: 'f2' },
    ]);
    expect(result).toMatchObject({ accepted: 2, rejected: 0 });
    expect((await read('free', '/v1/usage')).used).toBe(2);
  });

  it('Free key: 30 events a minute go through, the 31st is never sent (paced), and a 429 caused by another sender still starts the cooldown', async () => {
    const vigil = client('free-2');
    const outcomes: string[] = [];
    // 4 requests a second, under the plan's 5 per second: the minute window is what fills.
    for (let i = 0; i < 31; i++) {
      outcomes.push((await vigil.track({ event: 'auth.login.failure', actor_id: `u${i}` })).outcome);
      await delay(250);
    }
    expect(outcomes.slice(0, 30).every((o) => o === 'accepted')).toBe(true);
    // The minute policy is full for another ~58 s: the 31st is dropped by pacing, not sent into a 429.
    expect(outcomes[30]).toBe('dropped');
    expect(vigil.stats()).toMatchObject({ sent: 30, accepted: 30, rateLimited: 0, pacedDropped: 1, inCooldown: false });
    // Another process sharing the key knows nothing of these 30: its first request meets the 429.
    const other = client('free-2');
    expect((await other.track({ event: 'auth.login.failure', actor_id: 'other' })).outcome).toBe('rate_limited');
    expect(other.stats()).toMatchObject({ rateLimited: 1, inCooldown: true });
    // In cooldown: dropped without a request (the service's usage does not move).
    for (let i = 0; i < 5; i++) expect((await other.track({ event: 'auth.login.failure', actor_id: 'late' })).outcome).toBe('dropped');
    expect(await other.trackBatch([{ event: 'auth.login.failure' }, { event: 'auth.login.failure' }])).toMatchObject({ dropped: 2 });
    expect(other.stats()).toMatchObject({ sent: 1, accepted: 0, rateLimited: 1, dropped: 7, pacedDropped: 0, probes: 0 });
    expect((await read('free-2', '/v1/usage')).used).toBe(30);
  });

  it('Free key: 100 logins within one second cause no 429; each is sent (some after a paced wait) or counted dropped, none lost', async () => {
    const vigil = client('free-3');
    const pending: Promise<{ outcome: string }>[] = [];
    for (let i = 0; i < 100; i++) {
      pending.push(vigil.track({ event: 'auth.login.success', actor_id: `burst-${i}`, ip: '203.0.113.50' }));
      await delay(10);
    }
    const outcomes = (await Promise.all(pending)).map((r) => r.outcome);
    await vigil.close({ timeoutMs: 10_000 });
    const stats = vigil.stats();
    const count = (o: string) => outcomes.filter((x) => x === o).length;
    console.log(
      `pacing run (Free, 100 logins in ~1 s): sent ${stats.sent}, paced ${stats.paced}, dropped ${stats.dropped} (paced_dropped ${stats.pacedDropped}), 429 ${stats.rateLimited}`,
    );
    expect(stats.rateLimited).toBe(0);
    expect(count('rate_limited')).toBe(0);
    expect(stats.failed).toBe(0);
    expect(stats.sent + stats.dropped).toBe(100);
    expect(stats.accepted).toBe(stats.sent);
    expect(count('accepted')).toBe(stats.sent);
    expect(count('dropped')).toBe(stats.dropped);
    expect(stats.pacedDropped).toBe(stats.dropped);
    // The plan's 5 per second: at least the first five go, and the burst does not switch protection off.
    expect(stats.sent).toBeGreaterThanOrEqual(5);
    expect(stats.inCooldown).toBe(false);
    expect((await read('free-3', '/v1/usage')).used).toBe(stats.sent);
    // Right after the burst the client still delivers once the window has room.
    await delay(1_300);
    expect((await vigil.track({ event: 'auth.login.success', actor_id: 'after-burst' })).outcome).toBe('accepted');
  });
});
