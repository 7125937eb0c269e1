import type { AccountScope } from '../../event/tenancy.js';

/**
 * Detection state primitives: the window state detectors share across events
 * and, with a shared backend, across instances.
 *
 * Batchable by construction: the detect stage collects one event's operations and sends them in
 * one `run(ops)` call, which an in-process store answers synchronously and a Redis store answers
 * in one pipelined round trip (each op one Lua script, all ops of a batch in order).
 *
 * Time: every op carries `at`, the EVENT time (ms). Window membership and "seen within" are
 * decided on event time, so a replayed or delayed batch gives the same answers as live traffic and
 * out-of-order events inside a window count where they belong. Memory lifetime (`ttlMs`) is
 * wall-clock time since the last write to the record: it bounds how long idle state is kept, never
 * what a window contains.
 *
 * Addressing: `key` names a record (one subject and one purpose, e.g. `a1|fail|actor:u1`), `field`
 * a value inside it. Fields of one record should share a lifetime; a store may keep a record as
 * one unit (memory: one map entry; Redis: one hash, or one key per field) that lives as long as
 * its longest `ttlMs`. Keys are opaque to the store beyond their account scope (`scope`), which
 * the store checks on every op.
 *
 * Ops without `ttlMs` keep their record at least `windowMs` of wall time after the write.
 * Every value stored is JSON-serialisable. Ops never throw for missing state; `run` rejects only
 * on infrastructure failure.
 */

/** Any JSON value, what `last` stores. */
export type StateValue = null | boolean | number | string | readonly StateValue[] | { readonly [k: string]: StateValue };

interface OpBase {
  readonly key: string;
  readonly field: string;
  /** Event time of the operation (ms since epoch). */
  readonly at: number;
}

/**
 * Sliding-window sum. The window is (end - windowMs, end] where `end` is the latest event time
 * the record has seen (this op's `at` included), so late events that arrive out of order are
 * counted with their neighbours and the answer does not depend on arrival order. Adds `amount`
 * (default 1; 0 only reads) at `at` when `at` falls in the window, drops entries that left it, and
 * answers the sum and number of entries in the window.
 * At most `maxEntries` (default 1,000) newest entries are kept: a counter only needs to prove a
 * threshold, so the answer saturates there.
 */
export interface WindowAddOp extends OpBase {
  readonly kind: 'window.add';
  readonly windowMs: number;
  readonly amount?: number;
  readonly maxEntries?: number;
}
export interface WindowResult {
  readonly sum: number;
  readonly entries: number;
}

/**
 * Distinct members in a sliding window (same window rule as `window.add`). Adds `member` at `at`
 * (omit to only read) and answers how many distinct members were seen in the window. With
 * `fewTries`, also answers how many of those occurred at most `fewTries` times since they last
 * entered the window (botnets spread few tries over many addresses).
 * With `remove`, deletes `member` (e.g. an actor whose failures turned out to be typos) instead
 * of adding it, then answers as a read.
 * At most `maxMembers` (default 2,000) most recently seen members are kept.
 * Suggested Redis shape: a sorted set member -> last seen plus a hash member -> tries.
 */
export interface DistinctAddOp extends OpBase {
  readonly kind: 'distinct.add';
  readonly windowMs: number;
  readonly member?: string;
  readonly remove?: boolean;
  readonly fewTries?: number;
  readonly maxMembers?: number;
}
export interface DistinctResult {
  readonly distinct: number;
  /** 0 unless the op gave `fewTries`. */
  readonly few: number;
  /** Whether `member` had occurred in the window before this op. */
  readonly memberSeen: boolean;
}

/**
 * Last value per key. Answers the stored value (if any) and, when `value` is given, stores it
 * unless the stored one is newer (out-of-order events never overwrite a later observation).
 */
export interface LastSwapOp extends OpBase {
  readonly kind: 'last.swap';
  readonly value?: StateValue;
  readonly ttlMs: number;
}
export interface LastResult {
  readonly previous: { readonly at: number; readonly value: StateValue } | null;
}

/**
 * "Seen before" set with a per-member age limit. Adds `member` at `at` (unless `readOnly`) and
 * answers whether it had been seen within `withinMs` before `at` (or later: a replayed earlier
 * event still counts what the store knows), and the number of members kept (this one included).
 * At most `maxMembers` (default 64) most recently seen members are kept.
 */
export interface SeenAddOp extends OpBase {
  readonly kind: 'seen.add';
  readonly member: string;
  readonly withinMs: number;
  readonly ttlMs: number;
  readonly readOnly?: boolean;
  readonly maxMembers?: number;
}
export interface SeenResult {
  readonly seen: boolean;
  readonly size: number;
}

/** A plain counter with a lifetime (e.g. known logins of an actor). Answers the new value. */
export interface CounterAddOp extends OpBase {
  readonly kind: 'counter.add';
  readonly amount: number;
  readonly ttlMs: number;
}
export interface CounterResult {
  readonly value: number;
}

/** One stage reached in a sequence: when, and what evidence (event ids, alert types). */
export interface SequenceStep {
  readonly stage: number;
  readonly at: number;
  readonly ref: StateValue;
}

/**
 * Ordered-sequence progress (kill chains). The record keeps, per stage, the latest time it was
 * reached together with the steps that led to it. Marking stage 0 starts a sequence at `at`.
 * Marking stage i > 0 succeeds only when stage i-1 is recorded at or before `at` and its sequence
 * started within `windowMs` before `at`; the stage then records the predecessor's steps plus this
 * one. Answers the steps up to and including this stage, or null when it could not advance.
 */
export interface SequenceMarkOp extends OpBase {
  readonly kind: 'sequence.mark';
  readonly stage: number;
  readonly windowMs: number;
  readonly ref: StateValue;
}
export interface SequenceResult {
  readonly steps: readonly SequenceStep[] | null;
}

/**
 * Ordered steps by event time (threat-model sequences), whatever order the events arrive in.
 * The record keeps, per stage, the latest `maxPerStage` sightings by event time (default 8). One event may meet several `stages`; it serves as one of them in a
 * chain. Answers a chain of all `stageCount` stages that uses this event, in non-decreasing event
 * time and spanning less than `windowMs` (an event exactly one window older has left it, as in
 * thresholds), or null; the event's sightings are recorded either way, so a late first step
 * completes a chain whose later steps came before it.
 */
export interface OrderedAddOp extends OpBase {
  readonly kind: 'ordered.add';
  readonly stages: readonly number[];
  readonly stageCount: number;
  readonly windowMs: number;
  readonly ref: StateValue;
  readonly maxPerStage?: number;
}
export const DEFAULT_ORDERED_MAX_PER_STAGE = 8;

/**
 * Alert deduplication per (type, subject): the record is the subject's, `field` the alert type.
 * If the record holds an alert of the type whose last sighting is within `windowMs` of `at`, it is
 * updated (count + 1, first/last seen widened, `eventId` appended, keeping the newest
 * `maxEventIds`, default 20: the count keeps counting every sighting); otherwise a new alert with
 * `id` is stored. Answers the alert state after the update and whether this op opened it.
 * A record keeps at most `maxAlerts` (default 64) alert types: storing a type the record did not
 * hold drops, past that bound, the other type last seen longest ago (on a tie, the smaller type
 * name), so a subject that many models fire on holds a bounded history.
 */
export interface AlertOpenOp extends OpBase {
  readonly kind: 'alert.open';
  readonly id: string;
  readonly windowMs: number;
  readonly eventId?: string;
  readonly maxEventIds?: number;
  readonly maxAlerts?: number;
}
/** Reads the open alert of the record (null when none, or when its last sighting is more than `windowMs` before `at`). */
export interface AlertPeekOp extends OpBase {
  readonly kind: 'alert.peek';
  readonly windowMs: number;
}
export interface AlertState {
  readonly id: string;
  readonly count: number;
  readonly firstSeen: number;
  readonly lastSeen: number;
  readonly eventIds: readonly string[];
}
export interface AlertOpenResult {
  readonly alert: AlertState;
  readonly opened: boolean;
}
export interface AlertPeekResult {
  readonly alert: AlertState | null;
}

/** Forgets a field (or the whole record when `field` is `*`), e.g. when an alert is resolved. */
export interface DeleteOp {
  readonly kind: 'delete';
  readonly key: string;
  readonly field: string;
}
export interface DeleteResult {
  readonly deleted: boolean;
}

export type StateOp =
  WindowAddOp | DistinctAddOp | LastSwapOp | SeenAddOp | CounterAddOp | SequenceMarkOp | OrderedAddOp | AlertOpenOp | AlertPeekOp | DeleteOp;

export interface StateResultMap {
  'window.add': WindowResult;
  'distinct.add': DistinctResult;
  'last.swap': LastResult;
  'seen.add': SeenResult;
  'counter.add': CounterResult;
  'sequence.mark': SequenceResult;
  'ordered.add': SequenceResult;
  'alert.open': AlertOpenResult;
  'alert.peek': AlertPeekResult;
  delete: DeleteResult;
}
export type ResultOf<O extends StateOp> = StateResultMap[O['kind']];
export type StateResult = StateResultMap[keyof StateResultMap];
export type ResultsOf<T extends readonly StateOp[]> = { -readonly [K in keyof T]: T[K] extends StateOp ? ResultOf<T[K]> : never };

export interface StateStore {
  readonly kind: 'memory' | 'redis';
  /**
   * What callers put before an account's keys. A shared store answers the account id itself
   * (every instance must agree); the in-process store a short process-local alias, unique per
   * account, since a 30-character id repeated in the keys of a million actors costs tens of MB.
   */
  scope(accountId: string): AccountScope;
  /**
   * Runs the ops in order, as one batch (one round trip for a remote store); answers one result per
   * op, at the same index. Ops of one batch see the effects of earlier ops of the same batch.
   * Every op's key must start with an account scope (`assertScopedKey`); a key without one throws.
   */
  run<const T extends readonly StateOp[]>(ops: T): Promise<ResultsOf<T>>;
  /**
   * Present on stores that answer in-process: the same as `run` without the promise, so that
   * detection skips an event-loop turn per batch. Remote stores leave it out, and callers then
   * pipeline the batches of a request's events instead.
   */
  runSync?(ops: readonly StateOp[]): StateResult[];
  /**
   * Present on stores that keep state in this process's heap (and on a store that falls back to
   * one): what that state is estimated to take, and how many records it evicted to stay in its
   * budget. Read by /metrics.
   */
  usage?(): StateStoreUsage;
  /**
   * Erasure of a data subject: deletes the account's records whose key, field names or values
   * hold a text for which `mentions` is true (a record as a whole: every key of it on Redis);
   * answers how many records it deleted. Rejects when the backend cannot be reached.
   */
  forget?(accountId: string, mentions: (text: string) => boolean): Promise<number>;
  /** Throws when the backend cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StateStoreUsage {
  /** Estimated heap bytes of the records held. */
  readonly bytes: number;
  /** Records evicted (least recently written first) to stay within the byte budget, since start. */
  readonly evictions: number;
}

/** The backend cannot serve the batch (Redis down, timeout). The detect stage lets it propagate (503). */
export class StateUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StateUnavailableError';
  }
}

export const DEFAULT_WINDOW_MAX_ENTRIES = 1000;
export const DEFAULT_DISTINCT_MAX_MEMBERS = 2000;
export const DEFAULT_SEEN_MAX_MEMBERS = 64;
export const DEFAULT_ALERT_MAX_EVENT_IDS = 20;
export const DEFAULT_ALERT_MAX_TYPES = 64;
