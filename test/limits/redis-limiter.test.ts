import { expect, it } from 'vitest';
import { RedisRateLimiter } from '../../src/redis/rate-limiter.js';
import { hashTag, RedisScript } from '../../src/redis/script.js';
import { limiterContract, T0 } from '../contract/limiter.contract.js';
import { connectTestRedis, describeWithRedis } from './redis-helper.js';

const redis = await connectTestRedis('redis-limiter');

describeWithRedis('RedisRateLimiter', redis, ({ client, prefix }) => {
  limiterContract('redis', () => new RedisRateLimiter(client, { prefix }), { propertyRuns: 150 });

  it('keeps each key in one string with a TTL, under a hash tag', async () => {
    const limiter = new RedisRateLimiter(client, { prefix });
    await limiter.consumeKey('key_ttl', { rpm: 10, eps: 5 }, 1, T0);
    await limiter.hitIp('198.51.100.1', 10, T0);
    for (const key of [`${prefix}rl:k:{key_ttl}`, `${prefix}rl:ip:{198.51.100.1}`]) {
      const ttl = await client.pttl(key);
      expect(ttl).toBeGreaterThan(60_000);
      expect(ttl).toBeLessThanOrEqual(66_000);
    }
  });

  it('writes nothing for a refused request or a peek', async () => {
    const limiter = new RedisRateLimiter(client, { prefix });
    await limiter.consumeKey('key_refused', { rpm: 1, eps: 5 }, 2, T0);
    await limiter.peekKey('key_peeked', { rpm: 1, eps: 5 }, T0);
    expect(await client.exists(`${prefix}rl:k:{key_refused}`, `${prefix}rl:k:{key_peeked}`)).toBe(0);
  });

  it("with time 'redis', buckets by the server clock whatever the caller's now says", async () => {
    const limiter = new RedisRateLimiter(client, { prefix, time: 'redis' });
    const limits = { rpm: 3, eps: 100 };
    for (let i = 0; i < 3; i++) expect((await limiter.consumeKey('key_servertime', limits, 1, T0 + i * 120_000)).allowed).toBe(true);
    const refused = await limiter.consumeKey('key_servertime', limits, 1, T0 + 999_000);
    expect(refused.allowed).toBe(false);
    const [seconds] = await client.time();
    // Reset is about a minute after the server's now, not after the caller's.
    expect(Math.abs(refused.status.resetAt - (Number(seconds) + 61))).toBeLessThanOrEqual(1);
  });

  it('two limiters (two instances) share one key', async () => {
    const a = new RedisRateLimiter(client, { prefix });
    const b = new RedisRateLimiter(client, { prefix });
    const limits = { rpm: 30, eps: 100 };
    for (let i = 0; i < 15; i++) {
      expect((await a.consumeKey('key_shared', limits, 1, T0 + i)).allowed).toBe(true);
      expect((await b.consumeKey('key_shared', limits, 1, T0 + i)).allowed).toBe(true);
    }
    expect((await a.consumeKey('key_shared', limits, 1, T0 + 20)).allowed).toBe(false);
    expect((await b.peekKey('key_shared', limits, T0 + 20)).remaining).toBe(0);
  });

  it('loads a script the server has not seen (NOSCRIPT) with EVAL, then runs it by SHA', async () => {
    // A fresh script text stands in for a flushed cache or a failover, without flushing a shared server.
    const script = new RedisScript(client, `return ARGV[1] .. '${Math.random()}'`, 1);
    const first = await script.run([`${prefix}noscript`], ['a']);
    expect(await script.run([`${prefix}noscript`], ['a'])).toBe(first);
    expect(String(first).startsWith('a0.')).toBe(true);
  });

  it('hash tags keep distinct ids distinct and braces out of the tag', () => {
    expect(hashTag('key_1')).toBe('{key_1}');
    expect(hashTag('a{b}')).toBe('{a%7bb%7d}');
    expect(hashTag('a%7bb%7d')).not.toBe(hashTag('a{b}'));
  });
});
