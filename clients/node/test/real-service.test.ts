import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Vigil, type VigilEvent } from '../src/index.js';
import { startRealService, type RealService, type Running } from '../../core/test/processes.js';

/** The Node client against the real service on a free port (SQLite, real limits). */
describe('Node client against the real service', () => {
  let service: Running<RealService>;
  beforeAll(async () => {
    service = await startRealService(['--plan', 'pro', '--plan', 'free', '--plan', 'free']);
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
    expect(result.risk).toEqual({ score: expect.any(Number), level: expect.any(String), action: expect.any(String) });
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

  it('Free key: its 30 events a minute go through, the 31st is a 429, then the client is silent in cooldown', async () => {
    const vigil = client('free-2');
    const outcomes: string[] = [];
    // Paced at 4 requests a second, under the plan's 5 per second: the minute window is what answers 429.
    for (let i = 0; i < 31; i++) {
      outcomes.push((await vigil.track({ event: 'auth.login.failure', actor_id: `u${i}` })).outcome);
      await delay(250);
    }
    expect(outcomes.slice(0, 30).every((o) => o === 'accepted')).toBe(true);
    expect(outcomes[30]).toBe('rate_limited');
    expect(vigil.stats()).toMatchObject({ accepted: 30, rateLimited: 1, inCooldown: true });
    // In cooldown: dropped without a request (the service's usage does not move, and no 429 is counted).
    for (let i = 0; i < 5; i++) expect((await vigil.track({ event: 'auth.login.failure', actor_id: 'late' })).outcome).toBe('dropped');
    expect(await vigil.trackBatch([{ event: 'auth.login.failure' }, { event: 'auth.login.failure' }])).toMatchObject({ dropped: 2 });
    expect(vigil.stats()).toMatchObject({ accepted: 30, rateLimited: 1, dropped: 7, probes: 0 });
    expect((await read('free-2', '/v1/usage')).used).toBe(30);
  });
});
