/**
 * Checks threat-model input (a native model, a Sigma rule in YAML or JSON) on a thread of its own
 * (check-thread.ts), bounded in time and memory, so that no rule a tenant writes can hold the
 * request thread: parsing 64 KB of YAML or compiling a model's regular expressions takes tens of
 * milliseconds on its own, and a hostile rule far more.
 *
 * One thread serves every account, one check at a time, in arrival order; an account has at most
 * one check waiting or running, so one account's loop of checks delays another's by one check at
 * most. A check still running after `maxMs` has its thread terminated (a new one starts for the
 * next check) and is refused; a check that runs the thread's heap out is refused the same way.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleThread } from '../util/module-thread.js';
import type { CheckedModel, CheckReply, CheckRequest } from './check-thread.js';
import type { FieldMapping } from './field-mapping.js';
import type { Validation } from './validate.js';

export interface CheckerLimits {
  /** Wall time one check may take on the thread (ms). */
  readonly maxMs: number;
  /** Heap of the thread (MB): a check past it is refused. */
  readonly heapMb: number;
  /** An idle thread is kept this long for the next check (ms). */
  readonly idleMs: number;
}

export const CHECKER_LIMITS: CheckerLimits = { maxMs: 2_000, heapMb: 128, idleMs: 60_000 };

/** A check either ran (and the input is valid or not), or the account already has one waiting or running. */
export type CheckOutcome = { readonly ran: true; readonly result: Validation<CheckedModel> } | { readonly ran: false; readonly busy: true };

type Pending = { readonly request: CheckRequest; readonly accountId: string; readonly resolve: (outcome: CheckOutcome) => void };

export class ModelChecker {
  private thread: Worker | undefined;
  /** Resolves once the current thread has loaded its modules. */
  private threadReady: Promise<void> | undefined;
  private running: (Pending & { timer: NodeJS.Timeout | undefined; readonly thread: Worker }) | undefined;
  private readonly queue: Pending[] = [];
  private readonly accounts = new Set<string>();
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private closed = false;

  constructor(private readonly limits: CheckerLimits = CHECKER_LIMITS) {}

  /** Reads and validates a request body as a model (native or Sigma). */
  input(accountId: string, body: unknown, fields: FieldMapping): Promise<CheckOutcome> {
    return this.enqueue(accountId, { id: this.nextId++, kind: 'input', body, fields });
  }

  /** Validates a native model object. */
  native(accountId: string, body: unknown): Promise<CheckOutcome> {
    return this.enqueue(accountId, { id: this.nextId++, kind: 'native', body });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    for (const pending of this.queue.splice(0)) pending.resolve(refused('the service is shutting down'));
    if (this.running) this.finish(refused('the service is shutting down'));
    await this.stopThread();
  }

  private enqueue(accountId: string, request: CheckRequest): Promise<CheckOutcome> {
    if (this.closed) return Promise.resolve(refused('the service is shutting down'));
    if (this.accounts.has(accountId)) return Promise.resolve({ ran: false, busy: true });
    this.accounts.add(accountId);
    return new Promise((resolve) => {
      this.queue.push({ request, accountId, resolve });
      this.next();
    });
  }

  private next(): void {
    if (this.running !== undefined) return;
    const pending = this.queue.shift();
    if (pending === undefined) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => void this.stopThread(), this.limits.idleMs);
      this.idleTimer.unref();
      return;
    }
    clearTimeout(this.idleTimer);
    const thread = this.threadFor();
    const ready = this.threadReady as Promise<void>;
    const running = {
      thread,
      timer: undefined as NodeJS.Timeout | undefined,
      request: pending.request,
      accountId: pending.accountId,
      resolve: pending.resolve,
    };
    this.running = running;
    void ready.then(() => {
      if (this.running !== running) return;
      running.timer = setTimeout(() => {
        void this.stopThread();
        this.finish(refused(`checking it took longer than ${this.limits.maxMs / 1000} s; send a smaller or simpler rule`));
      }, this.limits.maxMs);
      thread.postMessage(pending.request);
    });
  }

  private threadFor(): Worker {
    if (this.thread !== undefined) return this.thread;
    const thread = startModuleThread(import.meta.url, 'check-thread', { resourceLimits: { maxOldGenerationSizeMb: this.limits.heapMb } });
    // Only the check this thread is running ends with it: a thread stopped at the time bound has
    // already answered its check, and the next check runs on a new thread.
    const runningHere = () => this.running?.thread === thread;
    this.threadReady = new Promise((resolve) => {
      thread.on('message', (reply: CheckReply) => {
        if (reply.kind === 'ready') resolve();
        else if (runningHere() && this.running?.request.id === reply.id) this.finish({ ran: true, result: reply.result });
      });
    });
    thread.on('error', (err) => {
      if (this.thread === thread) this.thread = undefined;
      const outOfMemory = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (runningHere())
        this.finish(
          refused(outOfMemory ? `checking it needed more than ${this.limits.heapMb} MB; send a smaller rule` : `it could not be checked: ${err.message}`),
        );
    });
    thread.on('exit', () => {
      if (this.thread === thread) this.thread = undefined;
      if (runningHere()) this.finish(refused('it could not be checked; retry'));
    });
    thread.unref();
    this.thread = thread;
    return thread;
  }

  private finish(outcome: CheckOutcome): void {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    clearTimeout(running.timer);
    this.accounts.delete(running.accountId);
    running.resolve(outcome);
    this.next();
  }

  private async stopThread(): Promise<void> {
    const thread = this.thread;
    this.thread = undefined;
    if (thread !== undefined) await thread.terminate();
  }
}

const refused = (message: string): CheckOutcome => ({ ran: true, result: { ok: false, errors: [{ field: '(model)', message }] } });
