/**
 * The compiled models in force per account. A model compiles once per saved version: the
 * registry reloads an account's rows when this instance changed them (invalidate) or when its
 * copy is older than `refreshMs` (another instance may have changed them), and recompiles only
 * the versions it has not compiled yet. A stale copy is served while the reload runs, so no
 * event waits on the database except an account's first.
 */
import type { Store } from '../storage/store.js';
import type { ThreatModelRow } from '../storage/types.js';
import { compileModel, type CompiledModel } from './compile.js';
import { storedDefinition } from './stored.js';

interface Entry {
  models: readonly CompiledModel[];
  loadedAt: number;
  reloading?: Promise<readonly CompiledModel[]>;
}

export interface RegistryOptions {
  /** How long another instance's change may take to reach this one (default 5 s). */
  readonly refreshMs?: number;
  /** Monotonic milliseconds (wall time, not event time). */
  readonly now?: () => number;
  readonly onCompileError?: (row: ThreatModelRow, err: unknown) => void;
}

export class ThreatModelRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly compiled = new Map<string, CompiledModel>();
  private readonly refreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly options: RegistryOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 5_000;
    this.now = options.now ?? (() => performance.now());
  }

  /** The account's enabled models when known (a reload starts if the copy is old); undefined before the first load. */
  current(accountId: string): readonly CompiledModel[] | undefined {
    const entry = this.entries.get(accountId);
    if (entry === undefined) return undefined;
    if (this.now() - entry.loadedAt > this.refreshMs && entry.reloading === undefined) void this.load(accountId).catch(() => undefined);
    return entry.models;
  }

  load(accountId: string): Promise<readonly CompiledModel[]> {
    const entry = this.entries.get(accountId);
    if (entry?.reloading) return entry.reloading;
    const reloading = this.store.listThreatModels(accountId).then(
      (rows) => {
        const models = this.compileAll(rows);
        this.entries.set(accountId, { models, loadedAt: this.now() });
        return models;
      },
      (err: unknown) => {
        const current = this.entries.get(accountId);
        if (current) delete current.reloading;
        throw err;
      },
    );
    if (entry) entry.reloading = reloading;
    else this.entries.set(accountId, { models: [], loadedAt: -Infinity, reloading });
    return reloading;
  }

  /** This instance changed the account's models: the next event reloads them. */
  invalidate(accountId: string): void {
    this.entries.delete(accountId);
  }

  private compileAll(rows: readonly ThreatModelRow[]): CompiledModel[] {
    const out: CompiledModel[] = [];
    const keep = new Set<string>();
    for (const row of rows) {
      if (!row.enabled) continue;
      const key = `${row.accountId}|${row.id}|${row.version}`;
      keep.add(key);
      let model = this.compiled.get(key);
      if (model === undefined) {
        try {
          model = compileModel(row.id, row.version, storedDefinition(row));
        } catch (err) {
          this.options.onCompileError?.(row, err);
          continue;
        }
        this.compiled.set(key, model);
      }
      out.push(model);
    }
    const prefix = `${rows[0]?.accountId ?? ''}|`;
    for (const key of this.compiled.keys()) if (rows.length > 0 && key.startsWith(prefix) && !keep.has(key)) this.compiled.delete(key);
    return out;
  }
}
