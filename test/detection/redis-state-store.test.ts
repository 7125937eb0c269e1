import { expect, it } from 'vitest';
import { RedisStateStore } from '../../src/detection/redis-state-store.js';
import { stateStoreContract } from '../contract/state-store.contract.js';
import { connectTestRedis, describeWithRedis } from '../limits/redis-helper.js';

const redis = await connectTestRedis('redis-state-store');

describeWithRedis('RedisStateStore', redis, (r) => {
  stateStoreContract('redis', () => ({ store: new RedisStateStore(r.client, { prefix: r.prefix }) }));

  it('writes one hash-tagged key per record, each with a lifetime; reads create nothing', async () => {
    const prefix = `${r.prefix}shape:`;
    const store = new RedisStateStore(r.client, { prefix });
    const at = Date.UTC(2026, 0, 15);
    await store.run([
      { kind: 'window.add', key: 'a1|fail|actor:u{1}', field: 'n', at, windowMs: 300_000 },
      { kind: 'seen.add', key: 'a1|country|actor:u1', field: 'c', member: 'FR', at, withinMs: 1_000, ttlMs: 90 * 86_400_000 },
      { kind: 'alert.peek', key: 'a1|alert|none', field: 'x', at, windowMs: 1_000 },
      { kind: 'window.add', key: 'a1|none', field: 'n', at, windowMs: 1_000, amount: 0 },
    ] as const);
    const keys = (await r.client.keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}st:{a1|country|actor:u1}`, `${prefix}st:{a1|fail|actor:u%7b1%7d}`]);
    const ttls = await Promise.all(keys.map((k) => r.client.pttl(k)));
    expect(ttls[0]).toBeGreaterThan(89 * 86_400_000);
    expect(ttls[1]).toBeGreaterThan(300_000);
    expect(ttls[1]).toBeLessThanOrEqual(301_000);
  });
});
