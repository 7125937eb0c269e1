/*
 * What a `catch` receives is `unknown`: JavaScript can throw any value. These read it without
 * assuming it is an Error.
 */

/** The message of an Error, or the thrown value as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The system error code (`ENOENT`, `ECONNREFUSED`...) of a caught value, if it has one. */
export function errorCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
