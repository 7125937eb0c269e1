/**
 * Dry run: a model (saved or not) over the account's stored events of a time range, on a private
 * in-memory state store, so nothing is written: no alert row, no window state, no score.
 *
 * Evaluation runs on a thread of its own (dry-run-thread.ts), never on the request thread: one
 * account's heavy model over thousands of events would otherwise stop every request of every
 * account for as long as it runs. The rows are read here, page by page, and posted to the thread
 * as they arrive: reading is asynchronous I/O on the store the service already has open (an
 * in-memory SQLite database is visible to its own connection only, and a PostgreSQL pool per
 * thread would be one more set of connections per run), and a page at a time keeps each
 * structured clone small.
 *
 * One deadline covers reading and evaluation; the thread checks it between events and answers
 * what it evaluated. A thread still busy a grace period after the deadline (one event's
 * evaluation that does not end) is terminated, and the answer is the last progress it posted.
 * At most one dry run per account and `concurrency` in the process run at a time; a dry run that
 * cannot start within `waitMs` is refused as busy.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { EventStore } from '../storage/store.js';
import type { EventRow } from '../storage/types.js';
import { youngGenerationLimits } from '../storage/thread-heap.js';
import type { Clock } from '../util/clock.js';
import { startModuleThread } from '../util/module-thread.js';
import { wallNow, type DryRunReply, type DryRunRequest, type DryRunRow, type DryRunTally } from './dry-run-thread.js';
import type { ThreatModelDefinition } from './model.js';

export interface DryRunLimits {
  /** Events read from the range at most. */
  readonly maxRows: number;
  /** Wall time of reading and evaluation together (ms). */
  readonly maxMs: number;
  /** Matched events and alerts listed in the answer (the counts cover all). */
  readonly listed: number;
  /** Dry runs evaluating at once in the process, each on a thread of its own. */
  readonly concurrency: number;
  /** How long a dry run waits for a free thread, or for its account's previous dry run, before it is refused (ms). */
  readonly waitMs: number;
  /** How long past the deadline a thread may still be evaluating before it is terminated (ms). */
  readonly graceMs: number;
}

/** One core stays with the request thread. */
const DEFAULT_CONCURRENCY = Math.max(1, Math.min(4, availableParallelism() - 1));

export const DRY_RUN_LIMITS: DryRunLimits = { maxRows: 10_000, maxMs: 2_000, listed: 100, concurrency: DEFAULT_CONCURRENCY, waitMs: 1_000, graceMs: 500 };

/** Rows per read: parsing a page and cloning it to the thread is one stretch of the request thread's time. */
const PAGE = 200;
/** The thread reports its counts this often, so a thread terminated at the hard stop still leaves them. */
const PROGRESS_EVENTS = 200;
const PROGRESS_MS = 100;
/** An idle thread is kept this long for the next dry run: starting one loads the evaluator's modules again. */
const IDLE_MS = 60_000;
/** The thread's garbage is one event's view and state ops at a time. */
const THREAD_YOUNG_GENERATION_MB = 16;

export interface DryRunResult {
  /** Events evaluated, oldest first: every event of the range unless `truncated`. */
  readonly scanned: number;
  readonly matched: number;
  readonly alerts_raised: number;
  /** null when every event of the range was evaluated; otherwise the bound that stopped the run. */
  readonly truncated: 'rows' | 'time' | null;
  /** What `truncated` cut short, in words (null when nothing was). */
  readonly truncated_reason: string | null;
  readonly events: DryRunTally['events'];
  readonly alerts: DryRunTally['alerts'];
}

/** The model to run: a saved version, or a definition that validateModel accepted. The dry run's thread compiles it. */
export interface DryRunModel {
  readonly id: string;
  readonly version: number;
  readonly definition: ThreatModelDefinition;
}

/** A dry run either ran, or could not start within the wait: `retryAfter` seconds is when a slot should be free. */
export type DryRunOutcome = { readonly ok: true; readonly result: DryRunResult } | { readonly ok: false; readonly retryAfter: number };

/** Builds run the compiled thread module, source checkouts the TypeScript one (module-thread.ts). */
const newThread = (): Worker => startModuleThread(import.meta.url, 'dry-run-thread', { resourceLimits: youngGenerationLimits(THREAD_YOUNG_GENERATION_MB) });

const EMPTY: DryRunTally = Object.freeze({ evaluated: 0, matched: 0, alerts_raised: 0, events: [], alerts: [] });

interface Finished {
  readonly tally: DryRunTally;
  readonly stopped: 'time' | null;
  /** The thread was terminated at the hard stop: the tally is its last progress. */
  readonly terminated: boolean;
}

/** One run's conversation with its thread: the last progress, and the end (done, failure or hard stop). */
class Session {
  private last: DryRunTally = EMPTY;
  private settle: ((outcome: { finished: Finished } | { error: Error }) => void) | undefined;
  private readonly ended: Promise<{ finished: Finished } | { error: Error }>;
  private timer: NodeJS.Timeout | undefined;
  private terminated = false;
  /** The thread answered `done` and waits for its next run. */
  answered = false;

  constructor(readonly worker: Worker) {
    this.ended = new Promise((resolve) => (this.settle = resolve));
    worker.on('message', this.onMessage);
    worker.on('error', this.onError);
    worker.on('exit', this.onExit);
  }

  get over(): boolean {
    return this.settle === undefined;
  }

  private readonly onMessage = (reply: DryRunReply): void => {
    if (reply.kind === 'progress') this.last = reply;
    else if (reply.kind === 'failed') this.end({ error: new Error(`dry run thread failed: ${reply.message}`) });
    else if (reply.kind === 'done') {
      this.answered = true;
      this.end({ finished: { tally: reply, stopped: reply.stopped, terminated: false } });
    }
  };
  private readonly onError = (err: Error): void => this.end({ error: new Error(`dry run thread failed: ${err.message}`) });
  private readonly onExit = (code: number): void => {
    if (this.terminated) this.end({ finished: { tally: this.last, stopped: 'time', terminated: true } });
    else this.end({ error: new Error(`dry run thread exited (${code})`) });
  };

  /** The thread's answer, or its last progress once it has run `hardStopAt` (wall time) out. */
  async finish(hardStopAt: number): Promise<Finished> {
    if (!this.over) this.timer = setTimeout(() => this.stop(), Math.max(0, hardStopAt - wallNow()));
    const outcome = await this.ended;
    if ('error' in outcome) throw outcome.error;
    return outcome.finished;
  }

  /** Terminates the thread; the run ends with the last progress it posted. */
  stop(): void {
    if (this.terminated || this.over) return;
    this.terminated = true;
    void this.worker.terminate();
  }

  /** Stops listening (the thread is kept for another run, or terminated). */
  detach(): void {
    clearTimeout(this.timer);
    this.worker.off('message', this.onMessage);
    this.worker.off('error', this.onError);
    this.worker.off('exit', this.onExit);
  }

  private end(outcome: { finished: Finished } | { error: Error }): void {
    const settle = this.settle;
    if (settle === undefined) return;
    this.settle = undefined;
    this.detach();
    settle(outcome);
  }
}

interface Waiter {
  readonly accountId: string;
  readonly start: (started: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

const count = (n: number): string => n.toLocaleString('en-US');

function reasonOf(limits: DryRunLimits, read: number, readStop: 'rows' | 'time' | null, finished: Finished): string | null {
  const { evaluated } = finished.tally;
  if (finished.stopped === null && readStop === null) return null;
  if (finished.stopped === null && readStop === 'rows')
    return `the range holds more than ${count(limits.maxRows)} events; the ${count(read)} received last were evaluated`;
  const seconds = (limits.maxMs / 1000).toFixed(1);
  const phase = readStop === 'time' ? 'reading the range' : 'reading and evaluation';
  const more = readStop === 'rows' ? ` (the range holds more than ${count(limits.maxRows)})` : '';
  const cut = finished.terminated ? `; one event's evaluation ran ${(limits.graceMs / 1000).toFixed(1)} s past the bound and was stopped` : '';
  return `stopped after ${seconds} s of ${phase}${cut}; ${count(evaluated)} of the ${count(read)} events read${more} were evaluated, oldest first`;
}

const toThreadRow = (r: EventRow): DryRunRow => ({ id: r.id, type: r.type, occurredAt: r.occurredAt, actorId: r.actorId, ip: r.ip, doc: r.doc });

/** Dry runs of one service: their threads, the account and process bounds, and the waiting queue. */
export class DryRunner {
  /** Hard-stop wall time of each account's running dry run. */
  private readonly running = new Map<string, number>();
  private readonly queue: Waiter[] = [];
  private readonly idle: Worker[] = [];
  private readonly sessions = new Set<Session>();
  private readonly starting = new Set<Worker>();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: Pick<EventStore, 'listEvents'>,
    private readonly clock: Clock,
    private readonly limits: DryRunLimits = DRY_RUN_LIMITS,
  ) {}

  async run(accountId: string, model: DryRunModel, range: { from: number; to: number }): Promise<DryRunOutcome> {
    if (!(await this.acquire(accountId))) return { ok: false, retryAfter: this.retryAfter(accountId) };
    try {
      return { ok: true, result: await this.evaluate(accountId, model, range) };
    } finally {
      this.release(accountId);
    }
  }

  /** Stops every thread: a running dry run answers what it has evaluated, a waiting one is refused. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    for (const w of this.queue.splice(0)) {
      clearTimeout(w.timer);
      w.start(false);
    }
    for (const s of this.sessions) s.stop();
    for (const w of this.starting) void w.terminate();
    await Promise.all(this.idle.splice(0).map((w) => w.terminate()));
  }

  private async evaluate(accountId: string, model: DryRunModel, range: { from: number; to: number }): Promise<DryRunResult> {
    const { limits } = this;
    const worker = this.idle.pop() ?? (await this.startThread());
    worker.ref();
    // The bound starts once a thread is ready: starting one is neither reading nor evaluation.
    const deadline = wallNow() + limits.maxMs;
    const session = new Session(worker);
    this.sessions.add(session);
    try {
      const start: DryRunRequest = {
        kind: 'start',
        accountId,
        model: { id: model.id, version: model.version, definition: model.definition },
        now: this.clock.now(),
        listed: limits.listed,
      };
      worker.postMessage(start);
      let read = 0;
      let readStop: 'rows' | 'time' | null = null;
      let cursor: string | undefined;
      for (;;) {
        const page = await this.store.listEvents(accountId, { since: range.from, until: range.to }, Math.min(PAGE, limits.maxRows - read), cursor);
        read += page.items.length;
        if (session.over) break;
        worker.postMessage({ kind: 'rows', rows: page.items.map(toThreadRow) } satisfies DryRunRequest);
        if (page.nextCursor === null) break;
        if (read >= limits.maxRows) readStop = 'rows';
        else if (wallNow() >= deadline) readStop = 'time';
        if (readStop !== null) break;
        cursor = page.nextCursor;
      }
      worker.postMessage({ kind: 'evaluate', deadline, progressEvents: PROGRESS_EVENTS, progressMs: PROGRESS_MS } satisfies DryRunRequest);
      const finished = await session.finish(deadline + limits.graceMs);
      const { tally } = finished;
      return {
        scanned: tally.evaluated,
        matched: tally.matched,
        alerts_raised: tally.alerts_raised,
        truncated: finished.stopped ?? readStop,
        truncated_reason: reasonOf(limits, read, readStop, finished),
        events: tally.events,
        alerts: tally.alerts,
      };
    } finally {
      this.sessions.delete(session);
      // A thread that answered is kept for the next run; one stopped, failed or left mid-run (a read that failed) is not.
      session.detach();
      if (session.answered) this.keep(worker);
      else void worker.terminate();
    }
  }

  /** A new thread, once it has loaded its modules. */
  private async startThread(): Promise<Worker> {
    const worker = newThread();
    // During a run its Session reports a failure; an idle thread that fails is only dropped.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      const at = this.idle.indexOf(worker);
      if (at !== -1) this.idle.splice(at, 1);
    });
    this.starting.add(worker);
    try {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (reply: DryRunReply) => {
          if (reply.kind !== 'ready') return;
          detach();
          resolve();
        };
        const onError = (err: Error) => {
          detach();
          reject(new Error(`dry run thread failed to start: ${err.message}`));
        };
        const onExit = (code: number) => {
          detach();
          reject(new Error(`dry run thread exited (${code}) while starting`));
        };
        const detach = () => {
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
        };
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
      });
    } finally {
      this.starting.delete(worker);
    }
    return worker;
  }

  private keep(worker: Worker): void {
    if (this.closed) {
      void worker.terminate();
      return;
    }
    worker.unref();
    this.idle.push(worker);
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      for (const w of this.idle.splice(0)) void w.terminate();
    }, IDLE_MS);
    this.idleTimer.unref();
  }

  private startable(accountId: string): boolean {
    return !this.closed && this.running.size < this.limits.concurrency && !this.running.has(accountId);
  }

  private begin(accountId: string): void {
    this.running.set(accountId, wallNow() + this.limits.maxMs + this.limits.graceMs);
  }

  /** Waits (first come, first served among those that can start) for the account's turn and a thread. */
  private acquire(accountId: string): Promise<boolean> {
    if (this.startable(accountId) && !this.queue.some((w) => this.startable(w.accountId))) {
      this.begin(accountId);
      return Promise.resolve(true);
    }
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        accountId,
        start: resolve,
        timer: setTimeout(() => {
          const at = this.queue.indexOf(waiter);
          if (at !== -1) this.queue.splice(at, 1);
          resolve(false);
        }, this.limits.waitMs),
      };
      this.queue.push(waiter);
    });
  }

  private release(accountId: string): void {
    this.running.delete(accountId);
    for (let i = 0; i < this.queue.length;) {
      const waiter = this.queue[i] as Waiter;
      if (!this.startable(waiter.accountId)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      clearTimeout(waiter.timer);
      this.begin(waiter.accountId);
      waiter.start(true);
    }
  }

  /** Whole seconds until the run in the way has surely ended: the account's own, else the first to end. */
  private retryAfter(accountId: string): number {
    const own = this.running.get(accountId);
    const end = own ?? Math.min(...this.running.values());
    const ms = Number.isFinite(end) ? end - wallNow() : this.limits.maxMs;
    return Math.max(1, Math.ceil(ms / 1000));
  }
}
