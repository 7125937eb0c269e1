/**
 * The compiled models in force per account. A model compiles once per saved version, and every
 * instance answers with the models last saved by any instance: a save writes a new stamp for the
 * account into the detection state store (shared through Redis when scaled out), and each
 * request reads the stamp before it evaluates, reloading the account's rows when the stamp is
 * not the one its copy was loaded under. The stamp is the one the request read at authentication
 * with its account's other stamps (src/detection/state/stamps.ts), so it costs the request no
 * round trip of its own.
 *
 * A copy older than `refreshMs` is also reloaded in the background (the current copy is served
 * meanwhile): that covers a change saved while the shared state store was unreachable.
 *
 * Only enabled models that are not suspended are in force. A model this instance suspends stops at
 * once here (`suspend`), and on the other instances once the suspension is stored and `changed`.
 */
import type { StateStore } from '../detection/state/state-store.js';
import { AccountStamps } from '../detection/state/stamps.js';
import type { Stamps } from '../event/account.js';
import type { ThreatModelStore } from '../storage/store.js';
import type { ThreatModelRow } from '../storage/types.js';
import { compileModel, type CompiledModel } from './compile.js';
import { LIMITS } from './model.js';
import { storedDefinition } from './stored.js';

/** The models in force: at once when this instance's copy is current, else once reloaded. */
export type ModelsInForce = readonly CompiledModel[] | Promise<readonly CompiledModel[]>;

interface Entry {
  readonly models: readonly CompiledModel[];
  readonly stamp: string | null;
  readonly loadedAt: number;
}

interface Loading {
  readonly stamp: string | null;
  readonly promise: Promise<readonly CompiledModel[]>;
}

export interface RegistryOptions {
  /** How old a copy may get before it is reloaded in the background (default 5 s). */
  readonly refreshMs?: number;
  /** Monotonic milliseconds (wall time, not event time). */
  readonly now?: () => number;
  readonly onCompileError?: (row: ThreatModelRow, err: unknown) => void;
}

export class ThreatModelRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Loading>();
  private readonly compiled = new Map<string, CompiledModel>();
  /** Versions that did not compile: at most one entry per stored version, dropped once that version is no longer stored. */
  private readonly failed = new Set<string>();
  /** `account|id|version` of models suspended here whose suspension the store may not show yet. */
  private readonly suspended = new Set<string>();
  private readonly stamps: AccountStamps;
  private readonly refreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Pick<ThreatModelStore, 'listThreatModels'>,
    state: StateStore,
    private readonly options: RegistryOptions = {},
  ) {
    this.stamps = new AccountStamps(state);
    this.refreshMs = options.refreshMs ?? 5_000;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * The account's enabled models, as last saved through any instance. `stamps` are the ones the
   * request read; without them the account's stamps are read here.
   */
  inForce(accountId: string, stamps?: Stamps): ModelsInForce {
    const read = stamps ?? this.stamps.read(accountId);
    if (!(read instanceof Promise)) return this.resolve(accountId, read.threatModels);
    return read.then((found) => this.resolve(accountId, found.threatModels));
  }

  /**
   * An account's models were saved: a new stamp makes every instance reload them on its next
   * event. Awaited before the change is answered, so the answer means the change is in force.
   */
  async changed(accountId: string): Promise<void> {
    this.entries.delete(accountId);
    await this.stamps.bump(accountId, 'threatModels');
  }

  /**
   * Stops one version of a model on this instance at once, before its suspension is stored: the
   * copy in force drops it, and a load under way leaves it out.
   */
  suspend(accountId: string, id: string, version: number): void {
    this.suspended.add(modelKey(accountId, id, version));
    const entry = this.entries.get(accountId);
    if (entry !== undefined)
      this.entries.set(accountId, { models: entry.models.filter((m) => m.id !== id || m.version !== version), stamp: entry.stamp, loadedAt: entry.loadedAt });
  }

  /** Undoes `suspend` when the suspension could not be stored: the model runs again here until measured again. */
  resume(accountId: string, id: string, version: number): void {
    if (this.suspended.delete(modelKey(accountId, id, version))) this.entries.delete(accountId);
  }

  /** Estimated heap of every compiled model kept, and of the account keeping most. */
  memory(): { readonly totalBytes: number; readonly largestAccountBytes: number } {
    const byAccount = new Map<string, number>();
    let totalBytes = 0;
    for (const [key, model] of this.compiled) {
      const account = key.slice(0, key.indexOf('|'));
      totalBytes += model.memoryBytes;
      byAccount.set(account, (byAccount.get(account) ?? 0) + model.memoryBytes);
    }
    let largestAccountBytes = 0;
    for (const bytes of byAccount.values()) largestAccountBytes = Math.max(largestAccountBytes, bytes);
    return { totalBytes, largestAccountBytes };
  }

  private resolve(accountId: string, stamp: string | null): ModelsInForce {
    const entry = this.entries.get(accountId);
    if (entry === undefined || entry.stamp !== stamp) return this.load(accountId, stamp);
    if (this.now() - entry.loadedAt > this.refreshMs && !this.loading.has(accountId)) void this.load(accountId, stamp).catch(() => undefined);
    return entry.models;
  }

  /** Loads the rows saved before `stamp` was read (or later ones); one load per account and stamp at a time. */
  private load(accountId: string, stamp: string | null): Promise<readonly CompiledModel[]> {
    const pending = this.loading.get(accountId);
    if (pending !== undefined && pending.stamp === stamp) return pending.promise;
    const promise = this.store.listThreatModels(accountId).then(
      (rows) => {
        const models = this.compileAll(accountId, rows);
        if (this.loading.get(accountId)?.promise === promise) {
          this.loading.delete(accountId);
          this.entries.set(accountId, { models, stamp, loadedAt: this.now() });
        }
        return models;
      },
      (err: unknown) => {
        if (this.loading.get(accountId)?.promise === promise) this.loading.delete(accountId);
        throw err;
      },
    );
    this.loading.set(accountId, { stamp, promise });
    return promise;
  }

  private compileAll(accountId: string, rows: readonly ThreatModelRow[]): CompiledModel[] {
    const out: CompiledModel[] = [];
    const keep = new Set<string>();
    const suspendedHere = new Set<string>();
    let accountBytes = 0;
    for (const row of rows) {
      const key = modelKey(row.accountId, row.id, row.version);
      if (this.suspended.has(key) && row.suspendedAt === null) suspendedHere.add(key);
      if (!row.enabled || row.suspendedAt !== null || this.suspended.has(key)) continue;
      keep.add(key);
      // A version that failed to compile fails again: it is not retried (nor logged) at each reload.
      if (this.failed.has(key)) continue;
      let model = this.compiled.get(key);
      if (model === undefined) {
        try {
          model = compileModel(row.id, row.version, storedDefinition(row));
        } catch (err) {
          this.failed.add(key);
          this.options.onCompileError?.(row, err);
          continue;
        }
        this.compiled.set(key, model);
      }
      // Saves keep an account within its limit; rows stored under an older, looser limit may not be.
      if (accountBytes + model.memoryBytes > LIMITS.accountMemoryBytes) {
        this.compiled.delete(key);
        keep.delete(key);
        this.options.onCompileError?.(
          row,
          new Error(`the account's enabled models are over the limit of ${LIMITS.accountMemoryBytes / 1024 / 1024} MiB compiled`),
        );
        continue;
      }
      accountBytes += model.memoryBytes;
      out.push(model);
    }
    const prefix = `${accountId}|`;
    for (const key of this.compiled.keys()) if (key.startsWith(prefix) && !keep.has(key)) this.compiled.delete(key);
    for (const key of this.failed)
      if (key.startsWith(prefix) && !rows.some((row) => modelKey(row.accountId, row.id, row.version) === key)) this.failed.delete(key);
    // Once the store shows a suspension (or the model has a new version, or is gone), it decides.
    for (const key of this.suspended) if (key.startsWith(prefix) && !suspendedHere.has(key)) this.suspended.delete(key);
    return out;
  }
}

const modelKey = (accountId: string, id: string, version: number): string => `${accountId}|${id}|${version}`;
