/**
 * The SQLite writer thread: owns one connection and runs every commit group on it, so the
 * inserts, index updates, fsync and WAL checkpoints of a commit never block the event loop that
 * serves requests. Messages: { id, writes } in; { id } or { id, error: { code, message } } out.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { SqliteBatchWriter, type SqliteWrites } from './sqlite-writes.js';
import { configureSqlite, type SqliteSynchronous } from './sqlite-pragmas.js';

export interface WriterThreadData {
  readonly file: string;
  readonly synchronous: SqliteSynchronous;
}

export type WriterRequest = { readonly id: number; readonly writes: SqliteWrites } | { readonly id: number; readonly close: true };
export type WriterReply = { readonly id: number; readonly error?: { readonly code?: string; readonly message: string } };

const port = parentPort;
if (port) {
  const data = workerData as WriterThreadData;
  const database = new SqliteDatabase(data.file);
  configureSqlite(database, data.synchronous);
  const writer = new SqliteBatchWriter(database);
  port.on('message', (request: WriterRequest) => {
    if ('close' in request) {
      database.close();
      port.postMessage({ id: request.id } satisfies WriterReply);
      port.close();
      return;
    }
    try {
      writer.write(request.writes);
      port.postMessage({ id: request.id } satisfies WriterReply);
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      const error = { message: typeof e.message === 'string' ? e.message : String(err), ...(typeof e.code === 'string' ? { code: e.code } : {}) };
      port.postMessage({ id: request.id, error } satisfies WriterReply);
    }
  });
}
