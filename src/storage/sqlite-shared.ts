/**
 * Slots of the Int32Array over the SharedArrayBuffer the SQLite writer and checkpoint threads
 * share (sqlite-checkpoint-thread.ts says how they use it). A module of its own: each thread's
 * module runs its thread when loaded, so neither can import the other.
 */
/** Transactions the writer committed so far (wraps). */
export const COMMITS = 0;
/** 1 while the checkpoint thread asks the writer to copy the last frames itself. */
export const CATCH_UP = 1;
export const SHARED_BYTES = 8;
