import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/**
 * A Lua script run by its SHA (one round trip), loaded with EVAL on the first NOSCRIPT
 * (a fresh server, a failover, a cluster node that never saw it). Scripts touch only
 * the keys they are given; keys share a hash tag so they live on one cluster slot.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(
    private readonly client: RedisClient,
    private readonly lua: string,
    private readonly keyCount: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (keys.length !== this.keyCount) throw new Error(`script expects ${this.keyCount} keys, got ${keys.length}`);
    try {
      return await this.client.evalsha(this.sha, this.keyCount, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return this.client.eval(this.lua, this.keyCount, ...keys, ...args);
    }
  }
}

/**
 * `{id}`: Redis Cluster hashes only the tagged part, so all of an id's keys share a
 * slot. Braces inside an id would end the tag early; they (and %) are percent-encoded,
 * which keeps distinct ids distinct.
 */
export function hashTag(id: string): string {
  return `{${id.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}}`;
}
