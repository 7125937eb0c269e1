/**
 * The SQLite checkpoint thread: owns one connection and copies the WAL back into the database
 * file, beside the writer thread rather than inside its commits (every connection runs with
 * `wal_autocheckpoint=0`, sqlite-pragmas.ts). A PASSIVE checkpoint takes no lock a writer waits
 * for, so commits go on while it copies pages and fsyncs the database file.
 *
 * The writer counts its commits in shared memory and wakes this thread; a pass runs when there
 * were commits since the last one, paced to find about `passFrames` new frames, so a page the
 * writer dirties again and again is copied once per pass. Passes alone seldom let the WAL start
 * over under steady load: SQLite starts it over at a commit only when every frame has been
 * copied, and the writer commits again before a pass catches up. So a pass that finds the WAL at
 * `restartFrames` or longer asks the writer to catch up: after its next commit (once that
 * commit's requests have their answer) the writer runs a PASSIVE checkpoint itself, which finds
 * only the frames appended since this pass to copy, and its following commit starts the WAL
 * over. That, with `journal_size_limit`, bounds the WAL on disk (docs/internals/performance.md,
 * "Checkpoints off the commit path"). Message: { close }, after which it runs a TRUNCATE
 * checkpoint, closes its connection and exits. Losing this thread loses nothing: committed
 * transactions are in the WAL, which the next checkpoint (or the last connection to close)
 * copies.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { configureSqlite, type SqliteSynchronous } from './sqlite-pragmas.js';
import { nameThread } from './thread-name.js';
import { CATCH_UP, COMMITS } from './sqlite-shared.js';

export interface CheckpointThreadData {
  readonly file: string;
  readonly synchronous: SqliteSynchronous;
  /** Shared with the writer thread: Int32 slots of sqlite-shared.ts. */
  readonly shared: SharedArrayBuffer;
  /** Bounds of the time between two passes (ms). */
  readonly minIntervalMs: number;
  readonly maxIntervalMs: number;
  /** New WAL frames a pass aims to find. */
  readonly passFrames: number;
  /** WAL length (frames) from which a pass asks the writer to catch up. */
  readonly restartFrames: number;
}

export type CheckpointRequest = { readonly close: true };

interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

/** Atomics.waitAsync (Node 16+), which the configured TypeScript library does not declare yet. */
const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number): { async: boolean; value: unknown } }).waitAsync.bind(
  Atomics,
);

const port = parentPort;
if (port) {
  nameThread('vigil-checkpt');
  const data = workerData as CheckpointThreadData;
  const shared = new Int32Array(data.shared);
  const database = new SqliteDatabase(data.file);
  configureSqlite(database, data.synchronous);
  let closing = false;

  const checkpoint = (mode: 'PASSIVE' | 'TRUNCATE'): CheckpointResult =>
    (database.pragma(`wal_checkpoint(${mode})`) as CheckpointResult[])[0] as CheckpointResult;

  let delay = data.minIntervalMs;
  let walFrames = 0;

  // The next pass is timed to find about `passFrames` new frames: a pass costs two fsyncs
  // whatever it copies.
  const pass = () => {
    const { log } = checkpoint('PASSIVE');
    const appended = log >= walFrames ? log - walFrames : log;
    walFrames = log;
    if (log >= data.restartFrames) Atomics.store(shared, CATCH_UP, 1);
    delay = Math.min(data.maxIntervalMs, Math.max(data.minIntervalMs, (delay * data.passFrames) / Math.max(1, appended)));
  };

  const run = async () => {
    let seen = Atomics.load(shared, COMMITS) - 1; // one pass at start: the WAL may hold frames of an earlier run
    while (!closing) {
      const now = Atomics.load(shared, COMMITS);
      if (now === seen) {
        const waiting = waitAsync(shared, COMMITS, now);
        if (waiting.async) await waiting.value;
        continue;
      }
      seen = now;
      pass();
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };

  port.on('message', (message: CheckpointRequest) => {
    if (!message.close) return;
    closing = true;
    // Wakes the loop, which then ends.
    Atomics.notify(shared, COMMITS);
    database.pragma('busy_timeout = 5000');
    checkpoint('TRUNCATE');
    database.close();
    port.close();
  });
  void run();
}
