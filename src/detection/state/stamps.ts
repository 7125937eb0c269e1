import { scopedKey } from '../../event/tenancy.js';
import { ulid } from '../../util/ids.js';
import type { LastResult, LastSwapOp, StateStore } from './state-store.js';

/** The stamp outlives any idle period worth caching for; once gone, the next read reloads. */
const STAMP_TTL_MS = 30 * 24 * 3600 * 1000;

/**
 * One stamp per account for one kind of cached record (threat models, keys), in the detection
 * state store (shared through Redis when scaled out). A change writes a new stamp; an instance
 * that cached the records under another stamp reloads them, so a change answered by one instance
 * is in force on every instance. A stamp nobody wrote yet (or one evicted) reads as null.
 */
export class AccountStamps {
  /** The read op per account, built once: it is sent on every request of the account. */
  private readonly reads = new Map<string, LastSwapOp>();

  constructor(
    private readonly state: StateStore,
    private readonly name: string,
  ) {}

  /** The account's stamp: at once from an in-process store, else after one round trip. */
  read(accountId: string): string | null | Promise<string | null> {
    const op = this.op(accountId);
    if (this.state.runSync) return stampOf(this.state.runSync([op])[0] as LastResult);
    return this.state.run([op]).then(([result]) => stampOf(result));
  }

  /** Writes a new stamp for the account: every instance reloads what it cached under the old one. */
  async bump(accountId: string): Promise<void> {
    await this.state.run([Object.assign({}, this.op(accountId), { value: ulid() })]);
  }

  private op(accountId: string): LastSwapOp {
    let op = this.reads.get(accountId);
    if (op === undefined) {
      // Event time 0 on every write: the latest write always wins, whatever the instances' clocks say.
      op = { kind: 'last.swap', key: scopedKey(this.state.scope(accountId), this.name, 'stamp'), field: 'stamp', at: 0, ttlMs: STAMP_TTL_MS };
      this.reads.set(accountId, op);
    }
    return op;
  }
}

const stampOf = (result: LastResult | undefined): string | null => {
  const value = result?.previous?.value;
  return typeof value === 'string' ? value : null;
};
