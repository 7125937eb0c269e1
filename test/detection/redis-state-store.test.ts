import { expect, it } from 'vitest';
import { RedisStateStore } from '../../src/redis/state-store.js';
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
      { kind: 'window.add', key: 'acc_1|fail|actor:u{1}', field: 'n', at, windowMs: 300_000 },
      { kind: 'seen.add', key: 'acc_1|country|actor:u1', field: 'c', member: 'FR', at, withinMs: 1_000, ttlMs: 90 * 86_400_000 },
      { kind: 'alert.peek', key: 'acc_1|alert|none', field: 'x', at, windowMs: 1_000 },
      { kind: 'window.add', key: 'acc_1|none', field: 'n', at, windowMs: 1_000, amount: 0 },
    ] as const);
    const keys = (await r.client.keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}st:{acc_1|country|actor:u1}`, `${prefix}st:{acc_1|fail|actor:u%7b1%7d}`, `${prefix}st:{acc_1|fail|actor:u%7b1%7d}:w:n`]);
    const ttls = await Promise.all(keys.map((k) => r.client.pttl(k)));
    expect(ttls[0]).toBeGreaterThan(89 * 86_400_000);
    for (const ttl of ttls.slice(1)) {
      expect(ttl).toBeGreaterThan(300_000);
      expect(ttl).toBeLessThanOrEqual(301_000);
    }
  });

  it('deleting a record or a field drops the sub-keys of its windows and distinct sets, and its alerts from their index', async () => {
    const prefix = `${r.prefix}del:`;
    const store = new RedisStateStore(r.client, { prefix });
    const at = Date.UTC(2026, 0, 15);
    const index = `${prefix}st:{acc_t|k}:a`;
    const fill = () =>
      store.run([
        { kind: 'window.add', key: 'acc_t|k', field: 'w', at, windowMs: 60_000 },
        { kind: 'distinct.add', key: 'acc_t|k', field: 'd', at, windowMs: 60_000, member: 'm' },
        { kind: 'alert.open', key: 'acc_t|k', field: 'a1', at, id: 'alr_1', windowMs: 60_000 },
        { kind: 'alert.open', key: 'acc_t|k', field: 'a2', at, id: 'alr_2', windowMs: 60_000 },
      ] as const);
    await fill();
    expect(await r.client.keys(`${prefix}*`)).toHaveLength(5);
    expect(await r.client.zrange(index, 0, -1)).toEqual(['a1', 'a2']);
    const ttl = await r.client.pttl(index);
    expect(ttl).toBeGreaterThan(60_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
    expect(await store.run([{ kind: 'delete', key: 'acc_t|k', field: 'd' }])).toEqual([{ deleted: true }]);
    expect(await store.run([{ kind: 'delete', key: 'acc_t|k', field: 'a1' }])).toEqual([{ deleted: true }]);
    expect(await r.client.keys(`${prefix}*`)).toHaveLength(3);
    expect(await r.client.zrange(index, 0, -1)).toEqual(['a2']);
    await fill();
    expect(await store.run([{ kind: 'delete', key: 'acc_t|k', field: '*' }])).toEqual([{ deleted: true }]);
    expect(await r.client.keys(`${prefix}*`)).toEqual([]);
  });
});
