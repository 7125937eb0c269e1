/**
 * Limiter micro benchmark: ns per check (memory), bytes per key (memory, after gc),
 * Redis round trip per check (sequential and 64 in flight) and Redis bytes per key.
 *
 *   npx tsx --expose-gc bench/limiter.ts            (Redis part skipped when 127.0.0.1:6379 is absent)
 *   VIGIL_BENCH_REDIS_URL=redis://host:port npx tsx --expose-gc bench/limiter.ts
 */
import { deleteKeysWithPrefix } from '../test/helpers/redis-keys.js';
import { Redis } from 'ioredis';
import { MemoryQuotaCounter } from '../src/limits/memory-quota.js';
import { MemoryRateLimiter } from '../src/limits/memory-limiter.js';
import { RedisQuotaCounter } from '../src/redis/quota-counter.js';
import { RedisRateLimiter } from '../src/redis/rate-limiter.js';
import type { RateLimiter } from '../src/limits/types.js';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const limits = { rpm: 1_000, eps: 100 };

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc (npx tsx --expose-gc bench/limiter.ts)');
  collect();
  collect();
}

const heap = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

interface Cost {
  /** Wall-clock ns per call. */
  readonly wall: number;
  /** CPU ns per call of this process (user + system): steadier than wall time on a loaded machine. */
  readonly cpu: number;
}

const show = (c: Cost, unit = 'check'): string => `${c.wall.toFixed(0)} ns/${unit} wall, ${c.cpu.toFixed(0)} ns/${unit} CPU`;

/** Cost per awaited call of `op(i)` over `n` calls, after a warm-up. */
async function nsPerOp(n: number, op: (i: number) => Promise<unknown>): Promise<Cost> {
  for (let i = 0; i < Math.min(n, 50_000); i++) await op(i);
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await op(i);
  const wall = Number(process.hrtime.bigint() - start) / n;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: ((cpu.user + cpu.system) * 1000) / n };
}

/** Calls and µs the server spent in a command so far (INFO commandstats). */
async function commandStats(client: Redis, command: string): Promise<{ calls: number; usec: number }> {
  const info = await client.info('commandstats');
  const match = new RegExp(`cmdstat_${command}:calls=(\\d+),usec=(\\d+)`).exec(info);
  return { calls: Number(match?.[1] ?? 0), usec: Number(match?.[2] ?? 0) };
}

/** Ops per second with `inFlight` concurrent callers. */
async function throughput(n: number, inFlight: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await op(next++);
    }),
  );
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function memoryBench(): Promise<void> {
  const keys = Array.from({ length: 10_000 }, (_, i) => `key_${i.toString(36).padStart(8, '0')}`);
  const limiter = new MemoryRateLimiter();
  // 10k keys round robin, the clock moving 1 ms every 20 checks: windows slide, most checks pass.
  const consume = await nsPerOp(2_000_000, (i) => limiter.consumeKey(keys[i % keys.length] as string, limits, 1 + (i & 3), T0 + ((i / 20) | 0)));
  const refuse = await nsPerOp(1_000_000, (i) => limiter.consumeKey('hot', { rpm: 30, eps: 5 }, 1, T0 + ((i / 20) | 0)));
  const peek = await nsPerOp(1_000_000, (i) => limiter.peekKey(keys[i % keys.length] as string, limits, T0 + 100_000 + ((i / 20) | 0)));
  const ip = await nsPerOp(2_000_000, (i) => limiter.hitIp(`10.0.${(i >> 8) & 255}.${i & 255}`, 600, T0 + 200_000 + ((i / 20) | 0)));
  const quota = new MemoryQuotaCounter(async () => ({ used: 0, dropped: 0 }));
  const reserve = await nsPerOp(1_000_000, (i) => quota.reserve(`acct_${i % 1000}`, '2026-01', 1, { monthlyCap: 1e12, overage: 'bill' }));
  console.log(`memory consumeKey (10k keys, sliding):   ${show(consume)}`);
  console.log(`memory consumeKey (one key, refusing):   ${show(refuse)}`);
  console.log(`memory peekKey:                          ${show(peek)}`);
  console.log(`memory hitIp (65k addresses):            ${show(ip)}`);
  console.log(`memory quota reserve (1k accounts):      ${show(reserve, 'reserve')}`);

  gc();
  const before = heap();
  const big = new MemoryRateLimiter({ initialCapacity: 1 });
  for (let i = 0; i < 100_000; i++) await big.consumeKey(`key_${i.toString(36).padStart(8, '0')}`, limits, 1, T0);
  gc();
  const keyBytes = (heap() - before) / 100_000;
  const ips = new MemoryRateLimiter({ initialCapacity: 1 });
  gc();
  const beforeIps = heap();
  for (let i = 0; i < 100_000; i++) await ips.hitIp(`2001:db8::${i.toString(16)}`, 600, T0);
  gc();
  const ipBytes = (heap() - beforeIps) / 100_000;
  const { keySlotBytes, ipSlotBytes } = big.stats();
  console.log(`memory per key (100k keys, after gc):    ${keyBytes.toFixed(0)} B (slot ${keySlotBytes} B; rest is Map entry, key string, slab doubling slack)`);
  console.log(`memory per address (100k IPv6, after gc): ${ipBytes.toFixed(0)} B (slot ${ipSlotBytes} B)`);
  // Keep both alive until measured.
  if (big.stats().keys + ips.stats().ips !== 200_000) throw new Error('lost keys');
}

async function redisBench(): Promise<void> {
  const url = process.env.VIGIL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    console.log(`redis: skipped, ${url} not reachable (${(err as Error).message})`);
    return;
  }
  const prefix = `vigil-bench:${process.pid}:`;
  try {
    const limiter: RateLimiter = new RedisRateLimiter(client, { prefix });
    const ping = await nsPerOp(20_000, () => client.ping());
    const stats0 = await commandStats(client, 'evalsha');
    const seq = await nsPerOp(20_000, (i) => limiter.consumeKey(`key_${i % 1000}`, limits, 1, T0 + i));
    const stats1 = await commandStats(client, 'evalsha');
    const serverUs = (stats1.usec - stats0.usec) / Math.max(1, stats1.calls - stats0.calls);
    const par = await throughput(100_000, 64, (i) => limiter.consumeKey(`key_${i % 1000}`, limits, 1, T0 + 100_000 + i));
    const quota = new RedisQuotaCounter(client, async () => ({ used: 0, dropped: 0 }), { prefix });
    const reserve = await nsPerOp(20_000, (i) => quota.reserve(`acct_${i % 100}`, '2026-01', 1, { monthlyCap: 1e12, overage: 'bill' }));
    await limiter.consumeKey('key_mem', limits, 1, T0);
    const keyBytes = await client.memory('USAGE', `${prefix}rl:k:{key_mem}`);
    console.log(`redis PING round trip:                   ${(ping.wall / 1000).toFixed(1)} µs`);
    console.log(
      `redis consumeKey, 1 in flight:           ${(seq.wall / 1000).toFixed(1)} µs/check (${(seq.wall / ping.wall).toFixed(2)}x a PING; client CPU ${(seq.cpu / 1000).toFixed(1)} µs)`,
    );
    console.log(`redis consumeKey script, server side:    ${serverUs.toFixed(1)} µs/call (INFO commandstats evalsha)`);
    console.log(`redis consumeKey, 64 in flight:          ${(par / 1000).toFixed(1)}k checks/s`);
    console.log(`redis quota reserve, 1 in flight:        ${(reserve.wall / 1000).toFixed(1)} µs/reserve`);
    console.log(`redis bytes per key (MEMORY USAGE):      ${keyBytes} B`);
  } finally {
    await deleteKeysWithPrefix(client, prefix);
    await client.quit();
  }
}

await memoryBench();
await redisBench();
