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
import { createHash, randomBytes } from 'node:crypto';
import type { EventStore } from '../storage/store.js';
import type { EventRow } from '../storage/types.js';
import { readSortCursor, writeSortCursor } from '../storage/sort-cursor.js';
import { MemoryDryRunStates, type DryRunStates } from './dry-run-states.js';
import { youngGenerationLimits } from '../storage/thread-heap.js';
import type { Clock } from '../util/clock.js';
import { startModuleThread } from '../util/module-thread.js';
import { wallNow, type DryRunReply, type DryRunRequest, type DryRunRow, type DryRunTally } from './dry-run-thread.js';
import type { ThreatModelDefinition } from './model.js';

export interface DryRunLimits {
  /** Events read from the range at most, per page. */
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

/** The range's events are counted up to this many for `progress.total` (an index range count, bounded). */
const TOTAL_COUNTED = 10_000_000;
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
  /** Events this page evaluated, oldest first: every event left in the range unless `truncated`. */
  readonly scanned: number;
  readonly matched: number;
  readonly alerts_raised: number;
  /** null when every event of the range was evaluated; otherwise the bound that stopped the run. */
  readonly truncated: 'rows' | 'time' | null;
  /** What `truncated` cut short, in words (null when nothing was). */
  readonly truncated_reason: string | null;
  readonly events: DryRunTally['events'];
  readonly alerts: DryRunTally['alerts'];
  /** Where the next page starts; null when the run is over (the range is done, or it cannot go on). */
  readonly next: DryRunPosition | null;
  /** The run so far, this page included. */
  readonly progress: { readonly evaluated: number; readonly total: number; readonly matched: number; readonly alerts_raised: number };
}

/**
 * Where a paged run stands: what the cursor of its next page holds. `after` is the store's sort
 * cursor of the last event evaluated (events are walked by event time, then id).
 */
export interface DryRunPosition {
  readonly run: string;
  readonly page: number;
  readonly after: string | null;
  readonly evaluated: number;
  readonly matched: number;
  readonly alertsRaised: number;
  readonly total: number;
}

/** The model to run: a saved version, or a definition that validateModel accepted. The dry run's thread compiles it. */
export interface DryRunModel {
  readonly id: string;
  readonly version: number;
  readonly definition: ThreatModelDefinition;
}

/** A dry run either ran, or could not start within the wait: `retryAfter` seconds is when a slot should be free. */
export type DryRunOutcome =
  | { readonly ok: true; readonly result: DryRunResult }
  | { readonly ok: false; readonly retryAfter: number }
  /** The page's state is gone: its cursor was used already, or waited past DRY_RUN_STATE_TTL_MS. */
  | { readonly ok: false; readonly spent: true };

/** Builds run the compiled thread module, source checkouts the TypeScript one (module-thread.ts). */
const newThread = (): Worker => startModuleThread(import.meta.url, 'dry-run-thread', { resourceLimits: youngGenerationLimits(THREAD_YOUNG_GENERATION_MB) });

const EMPTY: DryRunTally = Object.freeze({ evaluated: 0, matched: 0, alerts_raised: 0, events: [], alerts: [] });

interface Finished {
  readonly tally: DryRunTally;
  readonly stopped: 'time' | null;
  /** The state for the next page (see the thread's `done`). */
  readonly state?: Uint8Array | null;
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
      this.end({ finished: { tally: reply, stopped: reply.stopped, terminated: false, state: reply.state } });
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
/** A bound in seconds as written in a reason: "2.0", "0.5", and a bound under a tenth of a second exactly ("0.01"). */
const secondsOf = (ms: number): string => (ms % 100 === 0 ? (ms / 1000).toFixed(1) : String(ms / 1000));

function reasonOf(limits: DryRunLimits, read: number, readStop: 'rows' | 'time' | null, finished: Finished, ending: string | null): string | null {
  const { evaluated } = finished.tally;
  const then = ending ?? '; next_cursor continues';
  if (finished.stopped === null && readStop === null) return ending === null ? null : ending.slice(2);
  if (finished.stopped === null && readStop === 'rows')
    return `a page reads at most ${count(limits.maxRows)} events; these ${count(read)} were evaluated, oldest first${then}`;
  const seconds = secondsOf(limits.maxMs);
  const phase = readStop === 'time' ? 'reading the range' : 'reading and evaluation';
  const more = readStop === 'rows' ? ` (a page reads at most ${count(limits.maxRows)})` : '';
  const cut = finished.terminated ? `; one event's evaluation ran ${(limits.graceMs / 1000).toFixed(1)} s past the bound and was stopped` : '';
  return `stopped after ${seconds} s of ${phase}${cut}; ${count(evaluated)} of the ${count(read)} events read${more} were evaluated, oldest first${then}`;
}

/** Identifies a model in a cursor: a saved version by id, a model tried unsaved by its definition's digest. */
export function modelKeyOf(model: DryRunModel): string {
  if (model.version > 0) return `${model.id}@${model.version}`;
  return createHash('sha256').update(JSON.stringify(model.definition)).digest('hex').slice(0, 32);
}

/** What a dry-run cursor holds besides the run's position: the run's account, model and range, which its next page must repeat. */
export interface DryRunCursor {
  readonly account: string;
  readonly model: string;
  readonly from: number;
  readonly to: number;
  readonly at: DryRunPosition;
}

const CURSOR_MAX_CHARS = 1_000;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isText = (v: unknown, pattern: RegExp): v is string => typeof v === 'string' && pattern.test(v);

export const writeDryRunCursor = (c: DryRunCursor): string =>
  Buffer.from(
    JSON.stringify([c.account, c.model, c.from, c.to, c.at.run, c.at.page, c.at.after, c.at.evaluated, c.at.matched, c.at.alertsRaised, c.at.total]),
  ).toString('base64url');

/** The cursor's parts, or undefined when the text is no cursor this service wrote. */
export function readDryRunCursor(text: string): DryRunCursor | undefined {
  if (text.length > CURSOR_MAX_CHARS || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 11) return undefined;
  const [account, model, from, to, run, page, after, evaluated, matched, alertsRaised, total] = parts as unknown[];
  if (!isText(account, /^acc_[0-9A-Za-z]{1,64}$/) || !isText(model, /^[0-9A-Za-z_@.-]{1,100}$/) || !isText(run, /^[0-9a-f]{16}$/)) return undefined;
  if (!isCount(from) || !isCount(to) || !isCount(page) || page < 1 || !isCount(evaluated) || !isCount(matched) || !isCount(alertsRaised) || !isCount(total))
    return undefined;
  if (after !== null && (typeof after !== 'string' || readSortCursor(after) === undefined)) return undefined;
  return { account, model, from, to, at: { run, page, after, evaluated, matched, alertsRaised, total } };
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
    private readonly store: Pick<EventStore, 'listEvents' | 'countEventsBetween'>,
    private readonly clock: Clock,
    private readonly limits: DryRunLimits = DRY_RUN_LIMITS,
    private readonly states: DryRunStates = new MemoryDryRunStates(),
  ) {}

  /** One page of a run: the first (`at` undefined) or the one a cursor's position starts. */
  async run(accountId: string, model: DryRunModel, range: { from: number; to: number }, at?: DryRunPosition): Promise<DryRunOutcome> {
    if (!(await this.acquire(accountId))) return { ok: false, retryAfter: this.retryAfter(accountId) };
    try {
      let state: Uint8Array | undefined;
      if (at !== undefined) {
        state = await this.states.take(accountId, at.run, at.page);
        if (state === undefined) return { ok: false, spent: true };
      }
      const begun: DryRunPosition = at ?? {
        run: randomBytes(8).toString('hex'),
        page: 0,
        after: null,
        evaluated: 0,
        matched: 0,
        alertsRaised: 0,
        total: await this.store.countEventsBetween(accountId, range.from, range.to, TOTAL_COUNTED),
      };
      return { ok: true, result: await this.evaluate(accountId, model, range, begun, state) };
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

  private async evaluate(
    accountId: string,
    model: DryRunModel,
    range: { from: number; to: number },
    at: DryRunPosition,
    state: Uint8Array | undefined,
  ): Promise<DryRunResult> {
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
        ...(state === undefined ? {} : { state }),
      };
      worker.postMessage(start);
      let read = 0;
      let readStop: 'rows' | 'time' | null = null;
      let rangeDone = false;
      let cursor = at.after ?? undefined;
      // Each event read, in order, as the sort cursor that starts after it: the next page starts after the last one evaluated.
      const positions: string[] = [];
      // Reading stops at half the time bound, so a page leaves time to evaluate what it read.
      const readUntil = wallNow() + limits.maxMs / 2;
      for (;;) {
        const page = await this.store.listEvents(
          accountId,
          { since: range.from, until: range.to, sort: 'occurred_at' },
          Math.min(PAGE, limits.maxRows - read),
          cursor,
        );
        read += page.items.length;
        for (const row of page.items) positions.push(writeSortCursor(row.occurredAt, row.id));
        if (session.over) break;
        worker.postMessage({ kind: 'rows', rows: page.items.map(toThreadRow) } satisfies DryRunRequest);
        if (page.nextCursor === null) {
          rangeDone = true;
          break;
        }
        if (read >= limits.maxRows) readStop = 'rows';
        else if (wallNow() >= readUntil) readStop = 'time';
        if (readStop !== null) break;
        cursor = page.nextCursor;
      }
      worker.postMessage({
        kind: 'evaluate',
        deadline,
        progressEvents: PROGRESS_EVENTS,
        progressMs: PROGRESS_MS,
        more: !rangeDone,
      } satisfies DryRunRequest);
      const finished = await session.finish(deadline + limits.graceMs);
      const { tally } = finished;
      const evaluated = at.evaluated + tally.evaluated;
      const progress = {
        evaluated,
        total: Math.max(at.total, evaluated),
        matched: at.matched + tally.matched,
        alerts_raised: at.alertsRaised + tally.alerts_raised,
      };
      const done = rangeDone && !finished.terminated && tally.evaluated === read;
      let next: DryRunPosition | null = null;
      let ending: string | null = null;
      if (finished.terminated) ending = '; the run cannot go on (its state was lost with the thread): start it again with a later "from"';
      else if (!done) {
        const saved = finished.state !== undefined && finished.state !== null && (await this.states.save(accountId, at.run, at.page + 1, finished.state));
        if (saved)
          next = {
            run: at.run,
            page: at.page + 1,
            after: tally.evaluated === 0 ? at.after : (positions[tally.evaluated - 1] as string),
            evaluated: progress.evaluated,
            matched: progress.matched,
            alertsRaised: progress.alerts_raised,
            total: progress.total,
          };
        else
          ending =
            finished.state === null
              ? '; the run cannot go on: its state outgrew what a run may keep between pages'
              : '; the run cannot go on: its state could not be kept for the next page';
      }
      return {
        scanned: tally.evaluated,
        matched: tally.matched,
        alerts_raised: tally.alerts_raised,
        truncated: finished.stopped ?? readStop,
        truncated_reason: reasonOf(limits, read, readStop, finished, ending),
        events: tally.events,
        alerts: tally.alerts,
        next,
        progress,
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
