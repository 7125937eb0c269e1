import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Failover, FailoverQuotaCounter, FailoverRateLimiter, FailoverStateStore } from '../../src/redis/failover.js';
import { MemoryStateStore } from '../../src/detection/state/memory-state-store.js';
import { RedisStateStore } from '../../src/redis/state-store.js';
import { TenantScopeError } from '../../src/event/tenancy.js';
import { MemoryQuotaCounter } from '../../src/limits/memory-quota.js';
import { MemoryRateLimiter } from '../../src/limits/memory-limiter.js';
import { RedisQuotaCounter } from '../../src/redis/quota-counter.js';
import { RedisRateLimiter } from '../../src/redis/rate-limiter.js';
import { ManualClock } from '../../src/util/clock.js';
import { TcpProxy } from '../storage/tcp-proxy.js';
import { T0 } from '../contract/limiter.contract.js';
import { connectTestRedis, describeWithRedis, redisAddress, redisUrlThrough } from '../limits/redis-helper.js';

/** Wraps a backend so that every call throws while `down` is set, and counts calls. */
function flaky<T extends object>(target: T): { readonly backend: T; down: boolean; calls: number } {
  const state = { backend: target, down: false, calls: 0 };
  state.backend = new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function' || prop === 'close' || prop === 'scope') return value;
      return (...args: unknown[]) => {
        state.calls++;
        if (state.down) return Promise.reject(new Error('connection refused'));
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
  return state;
}

const limits = { rpm: 10, eps: 100 };

describe('FailoverRateLimiter', () => {
  it('switches to the stand-in on failure, retries the primary every retryEveryMs, and switches back', async () => {
    const clock = new ManualClock(T0);
    const primary = flaky(new MemoryRateLimiter());
    const changes: boolean[] = [];
    const failover = new Failover('test', { clock, retryEveryMs: 1_000, onChange: (d) => changes.push(d) });
    const limiter = new FailoverRateLimiter(primary.backend, new MemoryRateLimiter(), failover);

    expect((await limiter.consumeKey('k', limits, 4, T0)).status.remaining).toBe(6);
    primary.down = true;
    // The stand-in knows nothing of the primary's 4: a per-instance window while degraded.
    expect((await limiter.consumeKey('k', limits, 1, T0)).status.remaining).toBe(9);
    expect(failover.degraded).toBe(true);
    const callsWhileWaiting = primary.calls;
    clock.advance(999);
    await limiter.consumeKey('k', limits, 1, T0);
    await limiter.hitIp('192.0.2.1', 5, T0);
    expect(primary.calls).toBe(callsWhileWaiting);
    clock.advance(1);
    primary.down = false;
    expect((await limiter.consumeKey('k', limits, 1, T0 + 1_000)).status.remaining).toBe(5);
    expect(failover.degraded).toBe(false);
    expect(changes).toEqual([true, false]);
  });
});

describe('Failover', () => {
  it('while degraded, lets one call at a time try the backend; the others answer from the stand-in meanwhile', async () => {
    const clock = new ManualClock(T0);
    const failover = new Failover('test', { clock, retryEveryMs: 1_000 });
    const standIn = async () => 'stand-in';
    expect(await failover.run(() => Promise.reject(new Error('connection refused')), standIn)).toBe('stand-in');
    expect(failover.degraded).toBe(true);
    clock.advance(1_000);

    // A backend that has not answered yet (it stopped answering, or answers slowly).
    let tries = 0;
    let answer: (value: string) => void = () => undefined;
    const pending = () => {
      tries++;
      return new Promise<string>((resolve) => (answer = resolve));
    };
    const probe = failover.run(pending, standIn);
    const others = [failover.run(pending, standIn), failover.run(pending, standIn)];
    expect(tries).toBe(1);
    expect(await Promise.all(others)).toEqual(['stand-in', 'stand-in']);
    answer('backend');
    expect(await probe).toBe('backend');
    expect(failover.degraded).toBe(false);
    expect(await failover.run(async () => 'backend', standIn)).toBe('backend');
  });
});

describe('FailoverQuotaCounter', () => {
  it('counts on a store-seeded stand-in while degraded and hands the counts back on recovery', async () => {
    const clock = new ManualClock(T0);
    const store = { used: 100, dropped: 0 };
    const seed = async () => ({ ...store });
    const primary = flaky(new MemoryQuotaCounter(seed));
    const failover = new Failover('test', { clock });
    const quota = new FailoverQuotaCounter(primary.backend, new MemoryQuotaCounter(seed), failover);
    const plan = { monthlyCap: 110, overage: 'drop' } as const;

    expect(await quota.reserve('acc_a', '2026-01', 3, plan)).toEqual({ accepted: 3, dropped: 0 });
    store.used = 103; // committed
    primary.down = true;
    expect(await quota.reserve('acc_a', '2026-01', 5, plan)).toEqual({ accepted: 5, dropped: 0 });
    const failed = await quota.reserve('acc_a', '2026-01', 4, plan);
    expect(failed).toEqual({ accepted: 2, dropped: 2 });
    await quota.release('acc_a', '2026-01', failed); // its commit failed
    expect(failover.degraded).toBe(true);
    primary.down = false;
    clock.advance(1_000);
    // Back on the primary: 103 + the stand-in's 5, then this reservation.
    expect(await quota.reserve('acc_a', '2026-01', 1, plan)).toEqual({ accepted: 1, dropped: 0 });
    expect(failover.degraded).toBe(false);
    expect(await quota.current('acc_a', '2026-01')).toEqual({ used: 109, dropped: 0 });
  });

  it('does not add the counts to a month the primary lost (it re-seeds from the store, which has them)', async () => {
    const clock = new ManualClock(T0);
    const store = { used: 0, dropped: 0 };
    const seed = async () => ({ ...store });
    const primary = flaky(new MemoryQuotaCounter(seed));
    const failover = new Failover('test', { clock });
    const quota = new FailoverQuotaCounter(primary.backend, new MemoryQuotaCounter(seed), failover);
    const plan = { monthlyCap: 1_000, overage: 'bill' } as const;
    primary.down = true;
    await quota.reserve('acc_b', '2026-01', 7, plan);
    store.used = 7;
    primary.down = false;
    clock.advance(1_000);
    expect(await quota.current('acc_b', '2026-01')).toEqual({ used: 7, dropped: 0 });
  });
});

const redis = await connectTestRedis('fallback');

describeWithRedis('Fallback over Redis going away and coming back', redis, ({ prefix }) => {
  it('keeps answering from memory while Redis is unreachable, then returns to Redis', async () => {
    const proxy = new TcpProxy(redisAddress().host, redisAddress().port);
    const port = await proxy.start();
    expect(port).toBeGreaterThan(0);
    const client = new Redis(redisUrlThrough(port), { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 10 });
    client.on('error', () => {});
    try {
      await new Promise<void>((resolve) => client.once('ready', () => resolve()));
      const clock = new ManualClock(T0);
      const changes: boolean[] = [];
      const seed = async () => ({ used: 0, dropped: 0 });
      const failover = new Failover('redis', { clock, onChange: (d) => changes.push(d) });
      client.on('ready', () => failover.connectionReady());
      const limiter = new FailoverRateLimiter(new RedisRateLimiter(client, { prefix }), new MemoryRateLimiter(), failover);
      const quota = new FailoverQuotaCounter(new RedisQuotaCounter(client, seed, { prefix }), new MemoryQuotaCounter(seed), failover);
      const state = new FailoverStateStore(new RedisStateStore(client, { prefix }), new MemoryStateStore({ clock }), failover);
      const scope = state.scope('acc_f');
      const add = (at: number) => state.run([{ kind: 'window.add', key: `${scope}|fail|actor:u`, field: 'n', at, windowMs: 60_000 }] as const);
      const plan = { monthlyCap: 1_000, overage: 'bill' } as const;

      expect((await limiter.consumeKey('key_f', limits, 2, T0)).allowed).toBe(true);
      await quota.reserve('acc_f', '2026-01', 2, plan);
      expect((await add(T0))[0].sum).toBe(1);
      await proxy.stop();
      expect((await limiter.consumeKey('key_f', limits, 3, T0 + 1)).status.remaining).toBe(7);
      expect(await quota.reserve('acc_f', '2026-01', 3, plan)).toEqual({ accepted: 3, dropped: 0 });
      // The stand-in's window starts empty: per-instance state while Redis is away, under the same key.
      expect((await add(T0 + 1))[0].sum).toBe(1);
      expect(failover.degraded).toBe(true);

      await proxy.start(); // same port again
      for (let i = 0; i < 500 && client.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 5));
      expect(client.status).toBe('ready');
      clock.advance(1_000);
      // Redis still holds its own 2 (the stand-in's 3 were per instance).
      expect((await limiter.consumeKey('key_f', limits, 1, T0 + 2)).status.remaining).toBe(7);
      expect(failover.degraded).toBe(false);
      expect(changes).toEqual([true, false]);
      await quota.reserve('acc_f', '2026-01', 1, plan);
      expect(await quota.current('acc_f', '2026-01')).toEqual({ used: 6, dropped: 0 });
      expect((await add(T0 + 2))[0].sum).toBe(2);
      expect(changes).toEqual([true, false]);
    } finally {
      client.disconnect();
      await proxy.stop();
    }
  });
});

describe('FailoverStateStore', () => {
  it('is a StateStore whose scope() answers synchronously with the account id, and refuses anything but a resolved id', () => {
    const clock = new ManualClock(T0);
    const failover = new Failover('test', { clock });
    const state = new FailoverStateStore(new MemoryStateStore({ clock }), new MemoryStateStore({ clock }), failover);
    const offline = new Redis({ lazyConnect: true });
    const redisLike = new FailoverStateStore(new RedisStateStore(offline), new MemoryStateStore({ clock }), failover);
    expect(redisLike.scope('acc_01ABC')).toBe('acc_01ABC');
    expect(typeof state.scope('acc_01ABC')).toBe('string');
    expect(() => redisLike.scope(Promise.resolve('acc_x') as unknown as string)).toThrow(TenantScopeError);
    expect(() => redisLike.scope('undefined')).toThrow(TenantScopeError);
    expect(() => state.scope('')).toThrow(TenantScopeError);
  });

  it('refuses ops whose key lacks an account scope, on both backends, instead of sharing a record', async () => {
    const clock = new ManualClock(T0);
    const memory = new MemoryStateStore({ clock });
    const op = (key: string) => [{ kind: 'window.add', key, field: 'n', at: T0, windowMs: 60_000 }] as const;
    await expect(memory.run(op('[object Promise]|w|actor:alice'))).rejects.toThrow(TenantScopeError);
    await expect(memory.run(op('w|actor:alice'))).rejects.toThrow(TenantScopeError);
    await expect(memory.run(op('undefined|w|actor:alice'))).rejects.toThrow(TenantScopeError);
    expect((await memory.run(op(`${memory.scope('acc_1')}|w|actor:alice`)))[0].sum).toBe(1);
  });

  it('sends every call through one failover: a failure of the state store marks the limiter and quota degraded too', async () => {
    const clock = new ManualClock(T0);
    const failover = new Failover('test', { clock });
    const broken = flaky(new MemoryStateStore({ clock }));
    broken.down = true;
    const state = new FailoverStateStore(broken.backend, new MemoryStateStore({ clock }), failover);
    const limiter = new FailoverRateLimiter(new MemoryRateLimiter(), new MemoryRateLimiter(), failover);
    const key = `${state.scope('acc_1')}|w|actor:alice`;
    expect((await state.run([{ kind: 'window.add', key, field: 'n', at: T0, windowMs: 60_000 }] as const))[0].sum).toBe(1);
    expect(failover.degraded).toBe(true);
    const before = broken.calls;
    await limiter.consumeKey('key_1', limits, 1, T0);
    expect(broken.calls).toBe(before);
    expect(failover.degraded).toBe(true);
  });

  it('answers the stand-in’s usage: the state this process holds while the primary is down', async () => {
    const clock = new ManualClock(T0);
    const broken = flaky(new MemoryStateStore({ clock }));
    const standIn = new MemoryStateStore({ clock });
    const state = new FailoverStateStore(broken.backend, standIn, new Failover('test', { clock }));
    const key = `${state.scope('acc_1')}|w|actor:alice`;
    await state.run([{ kind: 'window.add', key, field: 'n', at: T0, windowMs: 60_000 }] as const);
    expect(state.usage()).toEqual({ bytes: 0, evictions: 0 });
    broken.down = true;
    await state.run([{ kind: 'window.add', key, field: 'n', at: T0, windowMs: 60_000 }] as const);
    expect(state.usage().bytes).toBeGreaterThan(0);
    expect(state.usage()).toEqual(standIn.usage());
  });
});
