import { StoreRejectedError, StoreUnavailableError, type Store } from '../storage/store.js';
import type { CommitBatch } from '../storage/types.js';

export interface CommitGroupOptions {
  /** Extra time to wait for more parts before committing; 0 commits on the next turn of the event loop. */
  readonly windowMs: number;
  /** A group reaching this many events commits at once. */
  readonly maxEvents: number;
  /**
   * Groups committing at the same time (default 1: the next group fills while one commits, so
   * each commit and each hand-off to a writer thread carries every event that arrived meanwhile).
   */
  readonly maxInFlight?: number;
  readonly onCommit?: (stats: { parts: number; events: number; durationMs: number; ok: boolean }) => void;
}

interface Pending {
  readonly part: CommitBatch;
  resolve(): void;
  reject(err: unknown): void;
}

/** The parts' rows, concatenated: the store sums usage per row and orders what it writes (storage/commit-plan.ts). */
export function mergeParts(parts: readonly CommitBatch[]): CommitBatch {
  if (parts.length === 1) return parts[0] as CommitBatch;
  const events = [];
  const alerts = [];
  const usage = [];
  const idempotency = [];
  for (const p of parts) {
    events.push(...p.events);
    alerts.push(...p.alerts);
    usage.push(...p.usage);
    idempotency.push(...p.idempotency);
  }
  return { events, alerts, usage, idempotency };
}

/**
 * Group commit: parts (one per request) arriving while a transaction runs, or within
 * `windowMs`, are written together in one transaction, so an fsync is paid per group
 * rather than per event. Each part's promise settles only after its transaction
 * committed: the HTTP layer answers 202 after that and never before.
 * By default one group is in flight at a time; under load the next group fills while it runs.
 */
export class CommitGroup {
  private pending: Pending[] = [];
  private pendingEvents = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;

  constructor(
    private readonly store: Store,
    private readonly options: CommitGroupOptions,
  ) {}

  add(part: CommitBatch): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ part, resolve, reject });
      this.pendingEvents += part.events.length;
      this.schedule();
    });
  }

  /** Commits everything queued and waits for it (graceful shutdown). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0 || this.pending.length > 0) {
      if (this.pending.length > 0 && this.inFlight.size < this.maxInFlight) this.startGroup();
      else await Promise.race([...this.inFlight]).catch(() => undefined);
    }
  }

  private get maxInFlight(): number {
    return this.options.maxInFlight ?? 1;
  }

  private schedule(): void {
    if (this.inFlight.size >= this.maxInFlight || this.timer) return;
    if (this.pendingEvents >= this.options.maxEvents) {
      this.startGroup();
      return;
    }
    const fire = () => {
      this.timer = null;
      if (this.inFlight.size < this.maxInFlight) this.startGroup();
    };
    this.timer = this.options.windowMs > 0 ? setTimeout(fire, this.options.windowMs) : setImmediate(fire);
  }

  private startGroup(): void {
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = null;
    }
    const group = this.pending;
    if (group.length === 0) return;
    this.pending = [];
    this.pendingEvents = 0;
    const running: Promise<void> = this.commitGroup(group).finally(() => {
      this.inFlight.delete(running);
      if (this.pending.length > 0) this.schedule();
    });
    this.inFlight.add(running);
  }

  private async commitGroup(group: Pending[]): Promise<void> {
    const started = performance.now();
    const events = group.reduce((n, p) => n + p.part.events.length, 0);
    try {
      await this.store.commit(mergeParts(group.map((p) => p.part)));
      this.options.onCommit?.({ parts: group.length, events, durationMs: performance.now() - started, ok: true });
      for (const p of group) p.resolve();
    } catch (err) {
      this.options.onCommit?.({ parts: group.length, events, durationMs: performance.now() - started, ok: false });
      // A lone part of a store that writes each commit alone has had its own transaction.
      if (group.length === 1 && this.store.coalescesCommits !== true) {
        group[0]?.reject(err);
        return;
      }
      // The one retry layer of the commit path. One bad part must not fail its neighbours (the
      // other parts of this group, or the groups a coalescing store wrote in the same
      // transaction): each part is written once more in a transaction of its own. If the group
      // failed ambiguously (connection lost around COMMIT) it may in fact have been written; a
      // part whose retry then hits its own (unique, generated) event ids is already stored.
      const ambiguous = err instanceof StoreUnavailableError;
      for (const p of group) {
        try {
          await this.store.commit(p.part, { alone: true });
          p.resolve();
        } catch (partErr) {
          if (ambiguous && partErr instanceof StoreRejectedError && p.part.events.length > 0) p.resolve();
          else p.reject(partErr);
        }
      }
    }
  }
}
