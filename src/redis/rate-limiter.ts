import { allowed, rejected } from '../limits/decisions.js';
import { luaScript } from './lua.js';
import { hashTag, RedisScript, type RedisClient } from './script.js';
import type { KeyLimits, LimitDecision, LimitReason, RateLimiter, WindowStatus } from '../limits/types.js';
import { MINUTE_WINDOW, SECOND_WINDOW, type WindowShape } from '../limits/windows.js';

export interface RedisRateLimiterOptions {
  /** Prefix of every key this limiter writes. Default 'vigil:'. */
  readonly prefix?: string;
  /**
   * Whose clock places units in buckets: 'caller' (the `now` argument, default) or
   * 'redis' (the server's TIME), which keeps windows exact across instances whose clocks
   * disagree.
   */
  readonly time?: 'caller' | 'redis';
  /** How long a ring outlives its newest unit, beyond the longest window (covers clock skew between instances). Default 5 s. */
  readonly skewMarginMs?: number;
}

const KEY_REASONS: readonly LimitReason[] = ['key_minute', 'key_second'];

/** The script's reply; the last two (the second window's remaining and reset) only for a key's two windows. */
type Reply = [number, number, number, number, number, number?, number?];

const SLIDING_WINDOW_LUA = luaScript('sliding-window');

/**
 * The scale-out limiter: the rings of windows.ts in one Redis string per key or address
 * (`<prefix>rl:k:{keyId}`, `<prefix>rl:ip:{ip}`), checked and updated by one Lua script
 * call per check, expiring a little after their newest unit leaves the minute window.
 * The client (standalone or Cluster) belongs to the caller; close() leaves it open.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly script: RedisScript;
  private readonly prefix: string;
  private readonly serverTime: boolean;
  private readonly ttlMs: number;

  constructor(client: RedisClient, options: RedisRateLimiterOptions = {}) {
    this.script = new RedisScript(client, SLIDING_WINDOW_LUA, 1);
    this.prefix = options.prefix ?? 'vigil:';
    this.serverTime = options.time === 'redis';
    this.ttlMs = MINUTE_WINDOW.buckets * MINUTE_WINDOW.bucketMs + (options.skewMarginMs ?? 5_000);
  }

  async hitIp(ip: string, perMinute: number, now: number): Promise<LimitDecision> {
    const reply = await this.check(`${this.prefix}rl:ip:${hashTag(ip)}`, now, true, [[MINUTE_WINDOW, perMinute, 1]]);
    return decision(reply, perMinute, undefined, ['ip_minute']);
  }

  async consumeKey(keyId: string, limits: KeyLimits, events: number, now: number): Promise<LimitDecision> {
    const reply = await this.check(this.keyOf(keyId), now, true, keyWindows(limits, events));
    return decision(reply, limits.rpm, limits.eps, KEY_REASONS);
  }

  async peekKey(keyId: string, limits: KeyLimits, now: number): Promise<WindowStatus> {
    return statusOf(await this.check(this.keyOf(keyId), now, false, keyWindows(limits, 0)), limits.rpm, limits.eps);
  }

  async close(): Promise<void> {}

  private keyOf(keyId: string): string {
    return `${this.prefix}rl:k:${hashTag(keyId)}`;
  }

  private async check(key: string, now: number, consume: boolean, windows: readonly (readonly [WindowShape, number, number])[]): Promise<Reply> {
    const args: (string | number)[] = [this.serverTime ? '' : now, consume ? '1' : '0', this.ttlMs];
    for (const [shape, limit, units] of windows) args.push(shape.bucketMs, shape.buckets, limit, units);
    return (await this.script.run([key], args)) as Reply;
  }
}

function keyWindows(limits: KeyLimits, events: number): readonly (readonly [WindowShape, number, number])[] {
  return [
    [MINUTE_WINDOW, limits.rpm, events],
    [SECOND_WINDOW, limits.eps, 1],
  ];
}

function statusOf([, remaining, resetAt, , , secondRemaining, secondResetAt]: Reply, limit: number, secondLimit: number | undefined): WindowStatus {
  if (secondLimit === undefined || secondRemaining === undefined || secondResetAt === undefined) return { limit, remaining, resetAt };
  return { limit, remaining, resetAt, second: { limit: secondLimit, remaining: secondRemaining, resetAt: secondResetAt } };
}

function decision(reply: Reply, limit: number, secondLimit: number | undefined, reasons: readonly LimitReason[]): LimitDecision {
  const [ok, , , retryAfter, refusing] = reply;
  const status = statusOf(reply, limit, secondLimit);
  if (ok === 1) return allowed(status);
  return rejected(status, retryAfter, reasons[refusing - 1] as LimitReason);
}
