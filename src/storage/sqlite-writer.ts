import type { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { CommitPlan } from './commit-plan.js';
import { SqliteBatchWriter } from './sqlite-writes.js';
import type { WriterReply, WriterRequest, WriterThreadData } from './sqlite-writer-thread.js';
import type { CheckpointThreadData } from './sqlite-checkpoint-thread.js';
import type { SqliteSynchronous } from './sqlite-pragmas.js';
import { SHARED_BYTES } from './sqlite-shared.js';
import { youngGenerationLimits } from './thread-heap.js';
import { startModuleThread } from '../util/module-thread.js';

/** Where commit groups are written: on the request thread, or on a writer thread. */
export interface SqliteCommitWriter {
  /** `alone`: in a transaction of its own, even when other writes are queued with it. */
  write(writes: CommitPlan, alone: boolean): Promise<void>;
  /** True when writes queued behind a running one share its successor's transaction. */
  readonly coalesces: boolean;
  close(): Promise<void>;
}

/** For `:memory:` databases, which only the connection that made them can see. */
export class InlineSqliteWriter implements SqliteCommitWriter {
  readonly coalesces = false;
  private writer: SqliteBatchWriter | null = null;

  constructor(private readonly database: Database.Database) {}

  async write(writes: CommitPlan): Promise<void> {
    // Every write is alone here: nothing queues behind another on the caller's thread.
    // Prepared on first use: the tables exist only once the store has migrated.
    this.writer ??= new SqliteBatchWriter(this.database);
    this.writer.write(writes);
  }

  async close(): Promise<void> {}
}

interface Waiting {
  resolve(): void;
  reject(err: Error): void;
}

const codedError = (message: string, code?: string): Error => Object.assign(new Error(message), code === undefined ? {} : { code });

function startThread(name: ThreadName, workerData: WriterThreadData | CheckpointThreadData): Worker {
  return startModuleThread(import.meta.url, name, { workerData, resourceLimits: youngGenerationLimits(THREAD_YOUNG_GENERATION_MB[name]) });
}

type ThreadName = 'sqlite-writer-thread' | 'sqlite-checkpoint-thread';

/**
 * Each thread's young generation in MB. The writer's garbage is one commit group at a time, and
 * the checkpoint thread makes almost none, so they need far less than the request thread.
 */
const THREAD_YOUNG_GENERATION_MB: Readonly<Record<ThreadName, number>> = { 'sqlite-writer-thread': 24, 'sqlite-checkpoint-thread': 6 };

export interface ThreadSqliteWriterOptions {
  readonly file: string;
  readonly synchronous: SqliteSynchronous;
  /** Least time between two checkpoint passes (ms). Default 50. */
  readonly checkpointIntervalMs?: number;
  /**
   * WAL length (frames) from which the writer is asked to copy the last frames itself, so that
   * the WAL starts over. Default 4,096: 16 MiB of 4 KiB pages, half of journal_size_limit
   * (sqlite-pragmas.ts).
   */
  readonly restartFrames?: number;
}

/** A checkpoint thread that fails is started again after this long (ms). */
const CHECKPOINT_RESTART_MS = 1000;

/**
 * For database files: commits run on a worker thread with its own connection, so a commit's
 * inserts, fsync and checkpoints overlap with request handling instead of stopping it. Reads
 * stay on the request thread's connection (WAL readers see each commit once it is done).
 * A thread that dies fails its outstanding commits (the caller answers 503, nothing was
 * acknowledged) and the next commit starts a new one.
 *
 * Checkpoints run on a second thread with a connection of its own, started with the writer
 * (sqlite-checkpoint-thread.ts), so no commit waits for one. A checkpoint thread that fails
 * costs no event (committed transactions are in the WAL): it is reported as a process warning
 * and started again a second later.
 */
export class ThreadSqliteWriter implements SqliteCommitWriter {
  readonly coalesces = true;
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private checkpointer: Worker | null = null;
  private checkpointRestart: NodeJS.Timeout | null = null;
  private closed = false;
  /** Shared with both threads (sqlite-shared.ts). */
  private readonly shared = new SharedArrayBuffer(SHARED_BYTES);

  constructor(private readonly options: ThreadSqliteWriterOptions) {}

  write(writes: CommitPlan, alone: boolean): Promise<void> {
    return this.request((id) => ({ id, writes, alone }));
  }

  /** The writer's last commits first, then a last checkpoint that empties the WAL. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.checkpointRestart) clearTimeout(this.checkpointRestart);
    if (this.worker) {
      const worker = this.worker;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      await this.request((id) => ({ id, close: true })).catch(() => undefined);
      await exited;
    }
    const checkpointer = this.checkpointer;
    if (checkpointer) {
      const exited = new Promise((resolve) => checkpointer.once('exit', resolve));
      checkpointer.ref();
      checkpointer.postMessage({ close: true });
      await exited;
    }
  }

  private request(make: (id: number) => WriterRequest): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Only outstanding commits keep the process alive, as a pending database call would.
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage(make(id));
    });
  }

  private start(): Worker {
    this.checkpointer ??= this.startCheckpointer();
    const worker = startThread('sqlite-writer-thread', { file: this.options.file, synchronous: this.options.synchronous, shared: this.shared });
    worker.on('message', (reply: WriterReply) => this.settle(reply));
    worker.on('error', (err) => this.fail(worker, codedError(`sqlite writer thread failed: ${err.message}`, 'SQLITE_WRITER_FAILED')));
    worker.on('exit', (code) => this.fail(worker, codedError(`sqlite writer thread exited (${code})`, 'SQLITE_WRITER_FAILED')));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private startCheckpointer(): Worker {
    const checkpointer = startThread('sqlite-checkpoint-thread', {
      file: this.options.file,
      synchronous: this.options.synchronous,
      shared: this.shared,
      minIntervalMs: this.options.checkpointIntervalMs ?? 50,
      maxIntervalMs: 1000,
      // SQLite's own auto-checkpoint size: as many frames copied per pass (and per two fsyncs) as before.
      passFrames: 1000,
      restartFrames: this.options.restartFrames ?? 4096,
    });
    let failure: Error | undefined;
    checkpointer.on('error', (err) => (failure = err));
    checkpointer.on('exit', (code) => {
      if (this.checkpointer !== checkpointer) return;
      this.checkpointer = null;
      if (this.closed) return;
      process.emitWarning(`sqlite checkpoint thread exited (${code}): ${failure?.message ?? 'no error'}; starting it again`, {
        code: 'SQLITE_CHECKPOINT_RESTARTED',
      });
      this.checkpointRestart = setTimeout(() => {
        this.checkpointRestart = null;
        if (!this.closed) this.checkpointer ??= this.startCheckpointer();
      }, CHECKPOINT_RESTART_MS);
      this.checkpointRestart.unref();
    });
    // Checkpoints alone never keep the process alive.
    checkpointer.unref();
    return checkpointer;
  }

  private settle(reply: WriterReply): void {
    for (const id of reply.done) this.take(id)?.resolve();
    for (const { id, error } of reply.failed) this.take(id)?.reject(codedError(error.message, error.code));
    // While closing, the thread's exit is awaited and must keep the process alive until then.
    if (this.waiting.size === 0 && !this.closed) this.worker?.unref();
  }

  private take(id: number): Waiting | undefined {
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    return waiting;
  }

  private fail(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(err);
  }
}
