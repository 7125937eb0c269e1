import type { StampName, Stamps } from '../../event/account.js';
import { scopedKey } from '../../event/tenancy.js';
import { ulid } from '../../util/ids.js';
import type { LastResult, LastSwapOp, StateResult, StateStore } from './state-store.js';

/** The stamp outlives any idle period worth caching for; once gone, the next read reloads. */
const STAMP_TTL_MS = 30 * 24 * 3600 * 1000;

/** The order of the ops of a read; each stamp's record name in the state store. */
const NAMES: readonly StampName[] = ['keys', 'suppressions', 'threatModels'];
const RECORDS: { readonly [N in StampName]: string } = { keys: 'keys', suppressions: 'suppressions', threatModels: 'threat-models' };

/**
 * The per-account stamps of the records each instance caches (keys, suppression lists, threat
 * models), in the detection state store (shared through Redis when scaled out). A change writes a
 * new stamp; an instance that cached the records under another stamp reloads them, so a change
 * answered by one instance is in force on every instance from the next request.
 *
 * A request reads all of its account's stamps at once, when it is authenticated: one batch, so
 * one round trip to a remote store however many caches the request consults, and at once from an
 * in-process store. The later stages use the values of that read (`AccountContext.stamps`) rather
 * than reading their own stamp again.
 */
export class AccountStamps {
  /** The read ops per account, built once: they are sent on every request of the account. */
  private readonly reads = new Map<string, readonly LastSwapOp[]>();

  constructor(private readonly state: StateStore) {}

  /** Every stamp of the account, in one batch: at once from an in-process store, else after one round trip. */
  read(accountId: string): Stamps | Promise<Stamps> {
    const ops = this.ops(accountId);
    if (this.state.runSync) return stampsOf(this.state.runSync(ops));
    return this.state.run(ops).then(stampsOf);
  }

  /** Writes a new stamp for the account: every instance reloads what it cached under the old one. */
  async bump(accountId: string, name: StampName): Promise<void> {
    const op = this.ops(accountId)[NAMES.indexOf(name)] as LastSwapOp;
    await this.state.run([Object.assign({}, op, { value: ulid() })]);
  }

  private ops(accountId: string): readonly LastSwapOp[] {
    let ops = this.reads.get(accountId);
    if (ops === undefined) {
      const scope = this.state.scope(accountId);
      // Event time 0 on every write: the latest write always wins, whatever the instances' clocks say.
      ops = NAMES.map((name): LastSwapOp => ({ kind: 'last.swap', key: scopedKey(scope, RECORDS[name], 'stamp'), field: 'stamp', at: 0, ttlMs: STAMP_TTL_MS }));
      this.reads.set(accountId, ops);
    }
    return ops;
  }
}

/** The stamps of a read's results, which come in the order of NAMES. */
const stampsOf = (results: readonly StateResult[]): Stamps => ({
  keys: stampOf(results[0]),
  suppressions: stampOf(results[1]),
  threatModels: stampOf(results[2]),
});

const stampOf = (result: StateResult | undefined): string | null => {
  const value = (result as LastResult | undefined)?.previous?.value;
  return typeof value === 'string' ? value : null;
};
