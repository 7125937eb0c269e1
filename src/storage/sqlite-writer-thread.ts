/**
 * The SQLite writer thread: owns one connection and runs every commit group on it, so the
 * inserts, index updates and fsync of a commit never block the event loop that serves requests.
 * Checkpoints run beside it (sqlite-checkpoint-thread.ts): it counts its commits in shared memory
 * and wakes that thread, and when that thread asks, it copies the last few frames itself after a
 * commit so that the WAL can start over. Messages: { id, writes } or { id, close } in; one
 * WriterReply out per drain.
 *
 * Group commit, second stage: every group that queued up while a transaction ran is written in
 * the next transaction, so the thread never waits for the request thread between commits and
 * one fsync covers them all. If that transaction fails, every group in it fails: the caller
 * (the pipeline's commit group) retries each with `alone`, which this thread writes in a
 * transaction of its own, so one group's bad row cannot fail its neighbours.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import type { CommitPlan } from './commit-plan.js';
import { SqliteBatchWriter } from './sqlite-writes.js';
import { configureSqlite, type SqliteSynchronous } from './sqlite-pragmas.js';
import { nameThread } from './thread-name.js';
import { CATCH_UP, COMMITS } from './sqlite-shared.js';

export interface WriterThreadData {
  readonly file: string;
  readonly synchronous: SqliteSynchronous;
  /** Shared with the checkpoint thread: Int32 slots of sqlite-shared.ts. */
  readonly shared: SharedArrayBuffer;
}

export type WriterRequest = { readonly id: number; readonly writes: CommitPlan; readonly alone: boolean } | { readonly id: number; readonly close: true };
/** The outcome of every request of one drain, in one message: a reply per request cost the request thread a wake-up each. */
export interface WriterReply {
  readonly done: readonly number[];
  readonly failed: readonly { readonly id: number; readonly error: { readonly code?: string; readonly message: string } }[];
}

function failure(id: number, err: unknown): WriterReply['failed'][number] {
  const e = err as { code?: unknown; message?: unknown };
  return { id, error: { message: typeof e.message === 'string' ? e.message : String(err), ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
}

/** The first request and every one queued behind it. */
function drain(port: MessagePort, first: WriterRequest): WriterRequest[] {
  const requests = [first];
  for (let next = receiveMessageOnPort(port); next !== undefined; next = receiveMessageOnPort(port)) requests.push(next.message as WriterRequest);
  return requests;
}

const port = parentPort;
if (port) {
  nameThread('vigil-writer');
  const data = workerData as WriterThreadData;
  const shared = new Int32Array(data.shared);
  const database = new SqliteDatabase(data.file);
  configureSqlite(database, data.synchronous);
  const writer = new SqliteBatchWriter(database);
  /**
   * The checkpoint thread has copied all but the frames appended since its last pass; no commit
   * can append more while this runs, so it copies the rest and the next commit starts the WAL
   * over. Tried again after the next commit if a read still uses the old frames.
   */
  const catchUp = () => {
    const [result] = database.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    if (result && result.busy === 0 && result.checkpointed === result.log) Atomics.store(shared, CATCH_UP, 0);
  };
  port.on('message', (first: WriterRequest) => {
    const requests = drain(port, first);
    const writes = requests.filter((r): r is Extract<WriterRequest, { writes: CommitPlan }> => 'writes' in r);
    const reply: { done: number[]; failed: WriterReply['failed'][number][] } = { done: [], failed: [] };
    const inTransaction = (group: readonly Extract<WriterRequest, { writes: CommitPlan }>[]) => {
      if (group.length === 0) return;
      try {
        writer.write(...group.map((r) => r.writes));
        for (const r of group) reply.done.push(r.id);
        Atomics.add(shared, COMMITS, 1);
        Atomics.notify(shared, COMMITS);
      } catch (err) {
        for (const r of group) reply.failed.push(failure(r.id, err));
      }
    };
    inTransaction(writes.filter((r) => !r.alone));
    for (const r of writes) if (r.alone) inTransaction([r]);
    const close = requests.find((r) => 'close' in r);
    if (close) {
      database.close();
      reply.done.push(close.id);
    }
    port.postMessage(reply satisfies WriterReply);
    if (close) port.close();
    else if (Atomics.load(shared, CATCH_UP) === 1) catchUp();
  });
}
