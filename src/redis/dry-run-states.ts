import type { Cluster, Redis } from 'ioredis';
import { DRY_RUN_STATE_TTL_MS, type DryRunStates } from '../threat-models/dry-run-states.js';
import { hashTag } from './script.js';
import { globLiteral, scanKeys } from './cluster-nodes.js';

/**
 * Paged dry runs' states in Redis, `<prefix>dryrun:{<account id>}:<run>:<page>`, each expiring
 * after DRY_RUN_STATE_TTL_MS, so any instance runs a run's next page. A Redis that cannot be
 * reached answers no state: the run cannot go on, and says so.
 */
export class RedisDryRunStates implements DryRunStates {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
  ) {}

  async save(accountId: string, run: string, page: number, state: Uint8Array): Promise<boolean> {
    try {
      await this.redis.set(this.key(accountId, run, page), Buffer.from(state.buffer, state.byteOffset, state.byteLength), 'PX', DRY_RUN_STATE_TTL_MS);
      return true;
    } catch {
      return false;
    }
  }

  async take(accountId: string, run: string, page: number): Promise<Uint8Array | undefined> {
    const key = this.key(accountId, run, page);
    try {
      const state = await this.redis.getBuffer(key);
      if (state === null) return undefined;
      void this.redis.del(key).catch(() => undefined);
      return new Uint8Array(state.buffer, state.byteOffset, state.byteLength);
    } catch {
      return undefined;
    }
  }

  /** Rejects when Redis cannot be reached (the erasure step is tried again). */
  async forgetAccount(accountId: string): Promise<void> {
    for await (const keys of scanKeys(this.redis, `${globLiteral(`${this.prefix}dryrun:${hashTag(accountId)}:`)}*`))
      await Promise.all(keys.map((key) => this.redis.unlink(key)));
  }

  private key(accountId: string, run: string, page: number): string {
    return `${this.prefix}dryrun:${hashTag(accountId)}:${run}:${page}`;
  }
}
