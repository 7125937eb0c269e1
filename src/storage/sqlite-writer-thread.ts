/**
 * The SQLite writer thread: owns one connection and runs every commit group on it, so the
 * inserts, index updates, fsync and WAL checkpoints of a commit never block the event loop that
 * serves requests. Messages: { id, writes } or { id, close } in; one WriterReply out per drain.
 *
 * Group commit, second stage: every group that queued up while a transaction ran is written in
 * the next transaction, so the thread never waits for the request thread between commits and
 * one fsync covers them all. If that transaction fails, every group in it fails: the caller
 * (the pipeline's commit group) retries each with `alone`, which this thread writes in a
 * transaction of its own, so one group's bad row cannot fail its neighbours.
 */
import { writeFileSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { SqliteBatchWriter, type SqliteWrites } from './sqlite-writes.js';
import { configureSqlite, type SqliteSynchronous } from './sqlite-pragmas.js';

export interface WriterThreadData {
  readonly file: string;
  readonly synchronous: SqliteSynchronous;
}

export type WriterRequest = { readonly id: number; readonly writes: SqliteWrites; readonly alone: boolean } | { readonly id: number; readonly close: true };
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

/**
 * Names this thread `vigil-writer`, so `top -H`, `ps -L` and the benchmarks tell its CPU from
 * the request thread's. Linux only; elsewhere the thread keeps its inherited name.
 */
function nameThread(): void {
  try {
    writeFileSync('/proc/thread-self/comm', 'vigil-writer');
  } catch {
    // Not Linux, or /proc not mounted: the name only serves observation.
  }
}

const port = parentPort;
if (port) {
  nameThread();
  const data = workerData as WriterThreadData;
  const database = new SqliteDatabase(data.file);
  configureSqlite(database, data.synchronous);
  const writer = new SqliteBatchWriter(database);
  port.on('message', (first: WriterRequest) => {
    const requests = drain(port, first);
    const writes = requests.filter((r): r is Extract<WriterRequest, { writes: SqliteWrites }> => 'writes' in r);
    const reply: { done: number[]; failed: WriterReply['failed'][number][] } = { done: [], failed: [] };
    const inTransaction = (group: readonly Extract<WriterRequest, { writes: SqliteWrites }>[]) => {
      if (group.length === 0) return;
      try {
        writer.write(...group.map((r) => r.writes));
        for (const r of group) reply.done.push(r.id);
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
  });
}
