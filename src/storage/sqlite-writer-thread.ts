/**
 * The SQLite writer thread: owns one connection and runs every commit group on it, so the
 * inserts, index updates, fsync and WAL checkpoints of a commit never block the event loop that
 * serves requests. Messages: { id, writes } in; { id } or { id, error: { code, message } } out.
 *
 * Group commit, second stage: every group that queued up while a transaction ran is written in
 * the next transaction, so the thread never waits for the request thread between commits and
 * one fsync covers them all. If that transaction fails, each group is retried alone, so one
 * group's bad row cannot fail its neighbours.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { SqliteBatchWriter, type SqliteWrites } from './sqlite-writes.js';
import { configureSqlite, type SqliteSynchronous } from './sqlite-pragmas.js';

export interface WriterThreadData {
  readonly file: string;
  readonly synchronous: SqliteSynchronous;
}

export type WriterRequest = { readonly id: number; readonly writes: SqliteWrites } | { readonly id: number; readonly close: true };
export type WriterReply = { readonly id: number; readonly error?: { readonly code?: string; readonly message: string } };

function errorReply(id: number, err: unknown): WriterReply {
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
  const data = workerData as WriterThreadData;
  const database = new SqliteDatabase(data.file);
  configureSqlite(database, data.synchronous);
  const writer = new SqliteBatchWriter(database);
  port.on('message', (first: WriterRequest) => {
    const requests = drain(port, first);
    const writes = requests.filter((r): r is Extract<WriterRequest, { writes: SqliteWrites }> => 'writes' in r);
    try {
      writer.write(...writes.map((r) => r.writes));
      for (const r of writes) port.postMessage({ id: r.id } satisfies WriterReply);
    } catch (err) {
      if (writes.length === 1) port.postMessage(errorReply((writes[0] as { id: number }).id, err));
      else
        for (const r of writes) {
          try {
            writer.write(r.writes);
            port.postMessage({ id: r.id } satisfies WriterReply);
          } catch (partErr) {
            port.postMessage(errorReply(r.id, partErr));
          }
        }
    }
    const close = requests.find((r) => 'close' in r);
    if (close) {
      database.close();
      port.postMessage({ id: close.id } satisfies WriterReply);
      port.close();
    }
  });
}
