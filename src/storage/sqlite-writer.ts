import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { SqliteBatchWriter, type SqliteWrites } from './sqlite-writes.js';
import type { WriterReply, WriterRequest, WriterThreadData } from './sqlite-writer-thread.js';

/** Where commit groups are written: on the request thread, or on a writer thread. */
export interface SqliteCommitWriter {
  /** `alone`: in a transaction of its own, even when other writes are queued with it. */
  write(writes: SqliteWrites, alone: boolean): Promise<void>;
  /** True when writes queued behind a running one share its successor's transaction. */
  readonly coalesces: boolean;
  close(): Promise<void>;
}

/** For `:memory:` databases, which only the connection that made them can see. */
export class InlineSqliteWriter implements SqliteCommitWriter {
  readonly coalesces = false;
  private writer: SqliteBatchWriter | null = null;

  constructor(private readonly database: Database.Database) {}

  async write(writes: SqliteWrites): Promise<void> {
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

/**
 * Builds run the compiled thread module. Source checkouts (tests, tsx) run the TypeScript one
 * through tsx's require hook: Node 20 applies `--import` loader hooks to the main thread only.
 */
function startThread(data: WriterThreadData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./sqlite-writer-thread.js', import.meta.url), { workerData: data });
  const require = createRequire(import.meta.url);
  const thread = fileURLToPath(new URL('./sqlite-writer-thread.ts', import.meta.url));
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(thread)});`;
  return new Worker(code, { eval: true, workerData: data });
}

/**
 * For database files: commits run on a worker thread with its own connection, so a commit's
 * inserts, fsync and checkpoints overlap with request handling instead of stopping it. Reads
 * stay on the request thread's connection (WAL readers see each commit once it is done).
 * A thread that dies fails its outstanding commits (the caller answers 503, nothing was
 * acknowledged) and the next commit starts a new one.
 */
export class ThreadSqliteWriter implements SqliteCommitWriter {
  readonly coalesces = true;
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(private readonly data: WriterThreadData) {}

  write(writes: SqliteWrites, alone: boolean): Promise<void> {
    return this.request((id) => ({ id, writes, alone }));
  }

  async close(): Promise<void> {
    if (!this.worker) return;
    const worker = this.worker;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    await this.request((id) => ({ id, close: true })).catch(() => undefined);
    await exited;
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
    const worker = startThread(this.data);
    worker.on('message', (reply: WriterReply) => this.settle(reply));
    worker.on('error', (err) => this.fail(worker, codedError(`sqlite writer thread failed: ${err.message}`, 'SQLITE_WRITER_FAILED')));
    worker.on('exit', (code) => this.fail(worker, codedError(`sqlite writer thread exited (${code})`, 'SQLITE_WRITER_FAILED')));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private settle(reply: WriterReply): void {
    for (const id of reply.done) this.take(id)?.resolve();
    for (const { id, error } of reply.failed) this.take(id)?.reject(codedError(error.message, error.code));
    if (this.waiting.size === 0) this.worker?.unref();
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
