/**
 * Sorting database errors into the two outcomes the Store contract knows: a write the database
 * refuses for its content (the caller's mistake, StoreRejectedError) and everything else
 * (the database cannot serve us right now, StoreUnavailableError). Anything unknown counts
 * as unavailable: a 503 asks the client to retry, which is never wrong for an unstored event.
 */

interface CodedError {
  readonly code?: unknown;
  readonly message?: unknown;
}

const codeOf = (err: unknown): string => {
  const code = (err as CodedError | null)?.code;
  return typeof code === 'string' ? code : '';
};

const messageOf = (err: unknown): string => {
  const message = (err as CodedError | null)?.message;
  return typeof message === 'string' ? message : '';
};

/** PostgreSQL cannot represent the text: U+0000 (22021 on a text value, 22P05 inside JSON). */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/**
 * The database refused the data itself: SQLite `SQLITE_CONSTRAINT*`, PostgreSQL SQLSTATE class
 * 23 (integrity constraint violation) or text PostgreSQL cannot store.
 */
export function isRejectedData(err: unknown): boolean {
  const code = codeOf(err);
  return code.startsWith('SQLITE_CONSTRAINT') || (code.length === 5 && code.startsWith('23')) || UNSTORABLE_TEXT.has(code);
}

/** Node socket errors that mean the TCP connection to the server is gone. */
const SOCKET_LOST = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN', 'ECONNABORTED']);
/** SQLSTATEs for a server-side end of the session: admin shutdown (pg_terminate_backend), crash shutdown. */
const SESSION_ENDED = new Set(['57P01', '57P02']);

/**
 * The connection this statement ran on died (the server ended the session or the socket
 * dropped). Such a failure says nothing about the next connection, so an operation that
 * certainly did not commit may be retried once on a fresh one.
 */
export function isLostConnection(err: unknown): boolean {
  const code = codeOf(err);
  if (SOCKET_LOST.has(code) || SESSION_ENDED.has(code) || code.startsWith('08')) return true;
  const message = messageOf(err);
  return (
    message.startsWith('Connection terminated') ||
    message.includes('Client has encountered a connection error') ||
    message === 'Client was closed and is not queryable' ||
    message === 'Postgres connection has been discarded'
  );
}
