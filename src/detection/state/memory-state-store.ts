import { getHeapStatistics } from 'node:v8';
import { accountScope, assertScopedKey, localScopeAlias, type AccountScope } from '../../event/tenancy.js';
import { systemClock, type Clock } from '../../util/clock.js';
import {
  DEFAULT_ALERT_MAX_EVENT_IDS,
  DEFAULT_ALERT_MAX_TYPES,
  DEFAULT_DISTINCT_MAX_MEMBERS,
  DEFAULT_ORDERED_MAX_PER_STAGE,
  DEFAULT_SEEN_MAX_MEMBERS,
  DEFAULT_WINDOW_MAX_ENTRIES,
  type AlertOpenOp,
  type AlertOpenResult,
  type AlertPeekOp,
  type AlertPeekResult,
  type AlertState,
  type CounterAddOp,
  type CounterResult,
  type DeleteOp,
  type DeleteResult,
  type DistinctAddOp,
  type DistinctResult,
  type LastResult,
  type LastSwapOp,
  type OrderedAddOp,
  type ResultsOf,
  type SeenAddOp,
  type SeenResult,
  type SequenceMarkOp,
  type SequenceResult,
  type SequenceStep,
  type StateOp,
  type StateResult,
  type StateStore,
  type StateStoreUsage,
  type StateValue,
  type WindowAddOp,
  type WindowResult,
} from './state-store.js';
import { chainThrough, type Sightings } from './ordered-steps.js';
import { getSlot, newRecord, recordBytes, setSlot, withField, withoutEmptyFields, type Rec } from './memory-records.js';
import { flatten } from '../../util/flatten.js';
import { firstKey } from '../../util/first-key.js';

export interface MemoryStateStoreOptions {
  readonly clock?: Clock;
  /**
   * Estimated bytes kept at most (see the estimate below); past them the least recently written
   * records go first. Default: bytesForHeap(V8's heap limit).
   */
  readonly maxBytes?: number;
  /** Records kept at most, on top of maxBytes; the least recently written go first. Default: no count bound. */
  readonly maxRecords?: number;
  /** Records examined for expiry per `run` (amortised sweep). Default 2. */
  readonly sweepPerRun?: number;
  /** Background sweep period (ms) so idle state is released without traffic; 0 disables. Default 100. */
  readonly sweepIntervalMs?: number;
  /**
   * Records examined per background sweep tick. Default: what finishes a pass over every record
   * once a minute (at least 64). The sweep runs on the request thread, so it works in many short
   * slices rather than a few long ones that would stall the requests queued behind them; and
   * since expired records are also dropped when read or evicted, a pass a minute only bounds how
   * long idle state lingers, without spending the request thread's time on a store that is busy.
   */
  readonly sweepPerTick?: number;
}

/**
 * Sorted event times with optional amounts; `end` is the latest event time seen. Entries before
 * `head` have left the window: dropping from the front only moves `head`, and the arrays are
 * compacted once the dead part is half of them, so a saturated window (maxEntries reached, one
 * drop per add) costs O(1) amortised per add instead of a copy of every entry.
 */
class WindowField {
  head = 0;
  times: number[] = [];
  amounts: number[] | null = null;
  sum = 0;
  constructor(public end: number) {}
}

/**
 * Members in last-seen order (Map order), each with [last seen, occurrences since it entered the
 * window]; `chars` is the estimated bytes of the member strings (see strBytes).
 */
class DistinctField {
  members = new Map<string, number[]>();
  chars = 0;
  constructor(public end: number) {}
}

/**
 * Seen-set times are whole seconds since 2020 (small integers V8 stores unboxed); "seen within
 * days" needs no ms. One member (the usual case: an actor's country) sits in the field's two
 * slots, member and time; from the second member on, the first slot holds a flat
 * [member, time, member, time, ...] array and the second is unused.
 */
type SeenList = (string | number)[];
const SEEN_EPOCH_S = 1_577_836_800;
const seenSeconds = (ms: number): number => Math.floor(ms / 1000) - SEEN_EPOCH_S;
/** Seen members are a few recurring values (countries, browser families), often built per event: one shared flat copy each. */
const INTERN_MAX_LENGTH = 64;
const INTERN_MAX_ENTRIES = 16_384;

interface SequenceStage {
  start: number;
  at: number;
  steps: SequenceStep[];
}
type SequenceField = (SequenceStage | null)[];

/** Ordered steps: each stage's sightings, oldest first (ordered.add). */
class OrderedField {
  constructor(readonly stages: (Sightings | undefined)[]) {}
}

/** One alert of a subject's record; `chars` is the estimated bytes of its event id strings. */
class AlertField {
  count = 1;
  firstSeen: number;
  lastSeen: number;
  eventIds: string[];
  chars: number;
  constructor(
    public id: string,
    at: number,
    eventId: string | undefined,
  ) {
    this.firstSeen = at;
    this.lastSeen = at;
    this.eventIds = eventId === undefined ? [] : [eventId];
    this.chars = eventId === undefined ? 0 : strBytes(eventId);
  }
}

/*
 * What a field's two slots (memory-records.ts) hold, by op kind; an empty field has undefined
 * in its first slot:
 *   window.add: WindowField, -        distinct.add: DistinctField, -     counter.add: value, -
 *   last.swap:  event time, value     seen.add: member, time | SeenList, -
 *   sequence.mark: SequenceField, -   alert.open/peek: AlertField, -
 */
const LRU_RESOLUTION_S = 60;
/** The background sweep's pass over every record takes about this long (see sweepPerTick). */
const SWEEP_PASS_MS = 60_000;

/**
 * The estimated bytes a heap of `heapLimit` bytes keeps (the default maxBytes): a third of it,
 * at least 16 MiB. The rest holds the requests in flight, the other caches and the room V8
 * needs to collect garbage. Past it the least recently written records go, instead of the
 * process running out of heap.
 */
export function bytesForHeap(heapLimit: number): number {
  return Math.max(16 * 1024 * 1024, Math.floor(heapLimit / 3));
}

/*
 * The size estimate. Each record carries its estimated bytes (`Rec.b`) and the store their sum.
 * A record counts its object (memory-records.ts recordBytes), its key and its entry in the
 * records Map, and each field what it points to: strings by length, arrays by element count
 * (with the spare room V8 gives arrays that grow by push), Maps and sets by entry count, alert
 * entries by their event ids. Every op that changes a field adds the difference of the field's
 * estimate before and after, and every field's estimate is computed from counts kept as the field
 * changes (lengths, sizes, a running sum of its strings' bytes), so no op walks a large field.
 * The figures are V8's on 64-bit builds (8-byte pointers, a time in ms is a 16-byte number).
 */
const KEY_ENTRY = 40;
const NUMBER = 16;
const ARRAY = 48;
const WINDOW = 88;
const DISTINCT = 248;
const DISTINCT_MEMBER = 104;
const SEQUENCE_STAGE = 80;
const SEQUENCE_STEP = 64;
const ALERT = 112;
const OBJECT = 56;

/** A string: its header and one byte a character (two-byte text is counted as one-byte). */
const strBytes = (s: string): number => 24 + s.length;
/** Backing-store slots of an array grown by push to n elements: V8 grows it by half plus 16, a quarter plus 16 spare on average. */
const grown = (n: number): number => (n <= 1 ? n : n + (n >> 2) + 16);
/** Seen-set members up to INTERN_MAX_LENGTH are interned (shared by every record); longer ones are the record's. */
const memberBytes = (m: string | number): number => (typeof m === 'string' && m.length > INTERN_MAX_LENGTH ? strBytes(m) : 0);

function valueBytes(v: StateValue | undefined): number {
  if (v === null || v === undefined || typeof v === 'boolean') return 0;
  if (typeof v === 'string') return strBytes(v);
  if (typeof v === 'number') return NUMBER;
  if (Array.isArray(v)) {
    let n = ARRAY + 8 * v.length;
    for (const e of v as readonly StateValue[]) n += valueBytes(e);
    return n;
  }
  let n = OBJECT;
  for (const k in v) n += 16 + valueBytes((v as { readonly [k: string]: StateValue })[k]);
  return n;
}

const windowBytes = (w: WindowField): number => WINDOW + ARRAY + 8 * grown(w.times.length) + (w.amounts === null ? 0 : ARRAY + 8 * grown(w.amounts.length));
const distinctBytes = (d: DistinctField): number => DISTINCT + DISTINCT_MEMBER * d.members.size + d.chars;
const alertBytes = (a: AlertField): number => ALERT + strBytes(a.id) + ARRAY + 8 * grown(a.eventIds.length) + a.chars;

function seenListBytes(s: SeenList): number {
  let n = ARRAY + 8 * s.length;
  for (let i = 0; i < s.length; i += 2) n += memberBytes(s[i] as string);
  return n;
}

function orderedBytes(o: OrderedField): number {
  let n = OBJECT + ARRAY + 8 * o.stages.length;
  for (const list of o.stages) {
    if (list === undefined) continue;
    n += ARRAY + 8 * grown(list.length);
    for (const s of list) n += OBJECT + NUMBER + valueBytes(s.ref);
  }
  return n;
}

function sequenceBytes(seq: SequenceField): number {
  // Filled by index from empty: V8 reserves 16 slots beyond the first.
  let n = ARRAY + 8 * (seq.length + 16);
  for (const stage of seq) if (stage !== undefined && stage !== null) n += stageBytes(stage);
  return n;
}

/** A stage: its object, its list of steps, and the step it added (the others are its predecessor's). */
function stageBytes(stage: SequenceStage): number {
  const last = stage.steps[stage.steps.length - 1];
  return SEQUENCE_STAGE + ARRAY + 8 * stage.steps.length + SEQUENCE_STEP + (last === undefined ? 0 : valueBytes(last.ref));
}

/** The estimate of a field from its two slots, whatever op kind wrote it. */
function fieldBytes(first: unknown, second: unknown): number {
  if (first === undefined) return 0;
  if (first instanceof AlertField) return alertBytes(first);
  if (first instanceof WindowField) return windowBytes(first);
  if (first instanceof DistinctField) return distinctBytes(first);
  if (first instanceof OrderedField) return orderedBytes(first);
  if (typeof first === 'string') return memberBytes(first);
  // A counter's value alone, or last.swap's event time and value.
  if (typeof first === 'number') return second === undefined ? 0 : NUMBER + valueBytes(second as StateValue);
  if (Array.isArray(first)) return typeof first[0] === 'string' ? seenListBytes(first as SeenList) : sequenceBytes(first as SequenceField);
  return 0;
}

/**
 * The embedded StateStore: every record in one Map, in least-recently-written order.
 * Bounded three ways: each record expires `ttlMs` of wall time after its last write, an amortised
 * sweep (a few records per batch, plus a background tick) releases expired records without
 * traffic to them, and past `maxBytes` of estimated size (and `maxRecords`, when given) the
 * least recently written go first. A subject's alert record keeps at most `maxAlerts` types.
 */
export class MemoryStateStore implements StateStore {
  readonly kind = 'memory' as const;
  private readonly records = new Map<string, Rec>();
  /** Account id -> its key scope (see scope()). */
  private readonly scopes = new Map<string, AccountScope>();
  /** Interned seen-set members (see intern()). */
  private readonly members = new Map<string, string>();
  /** First slot of the field the last write()/readField() found: saves returning a pair per op. */
  private slot = 0;
  private readonly clock: Clock;
  private readonly origin: number;
  private readonly maxBytes: number;
  private readonly maxRecords: number;
  /** Sum of the records' estimates (`Rec.b`). */
  private total = 0;
  private evicted = 0;
  private readonly sweepPerRun: number;
  private readonly sweepPerTick: number | undefined;
  private cursor: Iterator<string> | undefined;
  private evictCursor: Iterator<string> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private nowSec = 0;

  constructor(options: MemoryStateStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.origin = this.clock.now();
    this.maxBytes = options.maxBytes ?? bytesForHeap(getHeapStatistics().heap_size_limit);
    this.maxRecords = options.maxRecords ?? Infinity;
    this.sweepPerRun = options.sweepPerRun ?? 2;
    this.sweepPerTick = options.sweepPerTick;
    const interval = options.sweepIntervalMs ?? 100;
    if (interval > 0) {
      const ticksPerPass = Math.max(1, Math.round(SWEEP_PASS_MS / interval));
      this.timer = setInterval(() => this.sweep(this.sweepPerTick ?? Math.max(64, Math.ceil(this.records.size / ticksPerPass))), interval);
      this.timer.unref();
    }
  }

  /** Records currently held (expired ones not yet swept included). */
  get size(): number {
    return this.records.size;
  }

  /** Estimated bytes of the records held (expired ones not yet swept included). */
  get bytes(): number {
    return this.total;
  }

  /** Records evicted to stay within maxBytes or maxRecords, since the store was made. */
  get evictions(): number {
    return this.evicted;
  }

  usage(): StateStoreUsage {
    return { bytes: this.total, evictions: this.evicted };
  }

  /** The estimate recomputed from every record: a walk over all of them, to check the running total against. */
  recountBytes(): number {
    let n = 0;
    for (const [key, rec] of this.records) {
      n += recordBytes(rec) + strBytes(key) + KEY_ENTRY;
      for (let i = 0; i < rec.l.names.length; i++) n += fieldBytes(getSlot(rec, 2 * i), getSlot(rec, 2 * i + 1));
    }
    return n;
  }

  async run<const T extends readonly StateOp[]>(ops: T): Promise<ResultsOf<T>> {
    return this.runSync(ops) as ResultsOf<T>;
  }

  /** The same as `run`, without the promise: for in-process callers that want to skip a tick. */
  runSync(ops: readonly StateOp[]): StateResult[] {
    this.nowSec = this.seconds();
    const out: StateResult[] = new Array(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as StateOp;
      assertScopedKey(op.key);
      out[i] = this.apply(op);
      if (this.total > this.maxBytes || this.records.size > this.maxRecords) this.evictOldest();
    }
    if (this.sweepPerRun > 0) this.sweep(this.sweepPerRun);
    return out;
  }

  /** Short aliases (`#0`, `#1`, ...): every key holds one, and only aliases, so two accounts never share a key. */
  scope(accountId: string): AccountScope {
    let alias = this.scopes.get(accountId);
    if (alias === undefined) {
      accountScope(accountId);
      alias = localScopeAlias(this.scopes.size);
      this.scopes.set(accountId, alias);
    }
    return alias;
  }

  /**
   * Walks the account's records (under its alias, and under its id: a fail-over stand-in is
   * addressed by the shared backend's scope) and drops those that mention the subject, and the
   * interned members that do.
   */
  async forget(accountId: string, mentions: (text: string) => boolean): Promise<number> {
    const prefixes = [`${accountId}|`];
    const alias = this.scopes.get(accountId);
    if (alias !== undefined) prefixes.push(`${alias}|`);
    let dropped = 0;
    for (const [key, rec] of [...this.records]) {
      if (!prefixes.some((p) => key.startsWith(p))) continue;
      let found = mentions(key) || rec.l.names.some((name) => mentions(name));
      for (let i = 0; !found && i < rec.l.names.length; i++)
        found = textsMention(dumpSlot(getSlot(rec, 2 * i)), mentions) || textsMention(dumpSlot(getSlot(rec, 2 * i + 1)), mentions);
      if (found) {
        this.drop(key, rec);
        dropped++;
      }
    }
    for (const member of [...this.members.keys()]) if (mentions(member)) this.members.delete(member);
    return dropped;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.records.clear();
    this.total = 0;
    this.members.clear();
    this.cursor = undefined;
    this.evictCursor = undefined;
  }

  /**
   * Every record as plain data (structured-clone safe), with each record's remaining lifetime:
   * what `restore` needs to go on as if the store had never been put away. A dry run walking a
   * range page by page carries its state from one page to the next this way.
   */
  dump(): StateDump {
    const now = this.seconds();
    const records: DumpedRecord[] = [];
    for (const [key, rec] of this.records) {
      if (rec.e <= now) continue;
      const slots: unknown[] = [];
      for (let i = 0; i < rec.l.names.length * 2; i++) slots.push(dumpSlot(getSlot(rec, i)));
      records.push([key, rec.e - now, rec.b, rec.l.names, slots]);
    }
    return { scopes: [...this.scopes], records };
  }

  /** Adds the records of a dump (see dump()); the store should be empty. */
  restore(dump: StateDump): void {
    const now = this.seconds();
    for (const [accountId, alias] of dump.scopes) this.scopes.set(accountId, alias);
    for (const [key, left, bytes, names, slots] of dump.records) {
      let rec = newRecord(now + left);
      for (const name of names) rec = withField(rec, name);
      for (let i = 0; i < slots.length; i++) setSlot(rec, i, restoreSlot(slots[i]));
      rec.b = bytes;
      this.total += bytes;
      this.records.set(key, rec);
    }
  }

  /** Examines up to `budget` records (at most one full pass), resuming where the last sweep stopped; drops the expired ones. */
  sweep(budget: number): number {
    const now = this.seconds();
    const limit = Math.min(budget, this.records.size);
    let dropped = 0;
    for (let n = 0; n < limit; n++) {
      this.cursor ??= this.records.keys();
      let next = this.cursor.next();
      if (next.done) {
        this.cursor = this.records.keys();
        next = this.cursor.next();
        if (next.done) break;
      }
      const key = next.value;
      const rec = this.records.get(key);
      if (rec !== undefined && rec.e <= now) {
        this.drop(key, rec);
        dropped++;
      }
    }
    return dropped;
  }

  private seconds(): number {
    return Math.floor((this.clock.now() - this.origin) / 1000);
  }

  private apply(op: StateOp): StateResult {
    switch (op.kind) {
      case 'window.add':
        return this.windowAdd(op);
      case 'distinct.add':
        return this.distinctAdd(op);
      case 'last.swap':
        return this.lastSwap(op);
      case 'seen.add':
        return this.seenAdd(op);
      case 'counter.add':
        return this.counterAdd(op);
      case 'sequence.mark':
        return this.sequenceMark(op);
      case 'ordered.add':
        return this.orderedAdd(op);
      case 'alert.open':
        return this.alertOpen(op);
      case 'alert.peek':
        return this.alertPeek(op);
      case 'delete':
        return this.remove(op);
    }
  }

  /** The live record, or undefined; drops it when expired. */
  private read(key: string): Rec | undefined {
    const rec = this.records.get(key);
    if (rec === undefined) return undefined;
    if (rec.e <= this.nowSec) {
      this.drop(key, rec);
      return undefined;
    }
    return rec;
  }

  private drop(key: string, rec: Rec): void {
    this.records.delete(key);
    this.total -= rec.b;
  }

  /** Adds `delta` to the estimate of `rec` and of the store. */
  private charge(rec: Rec, delta: number): void {
    rec.b += delta;
    this.total += delta;
  }

  /**
   * The record for writing, created if needed, with `field` present (its first slot index in
   * `this.slot`), its lifetime extended to at least `ttlMs` from now. One Map lookup, plus one
   * set when the record is new, grows, or moves to the recent end.
   */
  private write(key: string, ttlMs: number, field: string): Rec {
    const exp = this.nowSec + Math.ceil(ttlMs / 1000) + 1;
    let rec = this.read(key);
    if (rec === undefined) {
      rec = withField(newRecord(exp), field);
      this.slot = 0;
      const stored = flatten(key);
      rec.b = recordBytes(rec) + strBytes(stored) + KEY_ENTRY;
      this.total += rec.b;
      this.records.set(stored, rec);
      return rec;
    }
    let slot = rec.l.slotOf(field);
    let moved = false;
    if (slot < 0) {
      const before = recordBytes(rec);
      const bigger = withField(rec, field);
      slot = bigger.l.names.length * 2 - 2;
      moved = bigger !== rec;
      rec = bigger;
      this.charge(rec, recordBytes(rec) - before);
    }
    this.slot = slot;
    const current = rec.e;
    if (exp > current) {
      rec.e = exp;
      // Re-inserting moves the record to the recent end of the Map (least-recently-written order,
      // to the minute). Doing it at most once a minute keeps the Map free of the holes each
      // delete leaves, which every sweep would otherwise walk over.
      if (exp - current >= LRU_RESOLUTION_S) {
        this.records.delete(key);
        this.records.set(flatten(key), rec);
        return rec;
      }
    }
    // A grown record replaces the old object under the same key (same Map position).
    if (moved) this.records.set(key, rec);
    return rec;
  }

  /** The live record's `field` slot index in `this.slot` and the record, or undefined when either is missing. */
  private readField(key: string, field: string): Rec | undefined {
    const rec = this.read(key);
    if (rec === undefined) return undefined;
    const slot = rec.l.slotOf(field);
    if (slot < 0 || getSlot(rec, slot) === undefined) return undefined;
    this.slot = slot;
    return rec;
  }

  /**
   * Deletes from the old end until `maxBytes` and `maxRecords` hold. The cursor persists between
   * calls: a Map keeps a deleted entry's slot until it rehashes, and a fresh iterator would walk
   * every slot freed by earlier evictions each time (quadratic once the store is full).
   * Everything before the cursor is gone or was re-inserted at the end, so the next key is the
   * oldest one.
   */
  private evictOldest(): void {
    while ((this.total > this.maxBytes || this.records.size > this.maxRecords) && this.records.size > 0) {
      this.evictCursor ??= this.records.keys();
      const next = this.evictCursor.next();
      if (next.done) {
        this.evictCursor = undefined;
        continue;
      }
      const rec = this.records.get(next.value);
      if (rec === undefined) continue;
      this.drop(next.value, rec);
      this.evicted++;
    }
  }

  private windowAdd(op: WindowAddOp): WindowResult {
    const amount = op.amount ?? 1;
    let rec: Rec | undefined;
    let w: WindowField | undefined;
    let before = 0;
    if (amount === 0) {
      rec = this.readField(op.key, op.field);
      w = rec === undefined ? undefined : (getSlot(rec, this.slot) as WindowField);
      if (w !== undefined) before = windowBytes(w);
    } else {
      rec = this.write(op.key, op.windowMs, op.field);
      w = getSlot(rec, this.slot) as WindowField | undefined;
      if (w === undefined) {
        w = new WindowField(op.at);
        setSlot(rec, this.slot, w);
      } else {
        before = windowBytes(w);
      }
    }
    if (rec === undefined || w === undefined) return { sum: 0, entries: 0 };
    if (op.at > w.end) w.end = op.at;
    const start = w.end - op.windowMs;
    pruneWindow(w, start);
    if (amount !== 0 && op.at > start) {
      insertWindow(w, op.at, amount);
      const max = op.maxEntries ?? DEFAULT_WINDOW_MAX_ENTRIES;
      const entries = w.times.length - w.head;
      if (entries > max) pruneCount(w, entries - max);
    }
    this.charge(rec, windowBytes(w) - before);
    return { sum: w.sum, entries: w.times.length - w.head };
  }

  private distinctAdd(op: DistinctAddOp): DistinctResult {
    if (op.remove === true && op.member !== undefined) {
      const rec = this.readField(op.key, op.field);
      const d = rec === undefined ? undefined : (getSlot(rec, this.slot) as DistinctField);
      let memberSeen = false;
      if (rec !== undefined && d !== undefined && d.members.delete(op.member)) {
        memberSeen = true;
        d.chars -= strBytes(op.member);
        this.charge(rec, -DISTINCT_MEMBER - strBytes(op.member));
      }
      return Object.assign(this.distinctAdd(Object.assign({}, op, { member: undefined, remove: false })), { memberSeen });
    }
    const adding = op.member !== undefined;
    let rec: Rec | undefined;
    let d: DistinctField | undefined;
    let before = 0;
    if (adding) {
      rec = this.write(op.key, op.windowMs, op.field);
      d = getSlot(rec, this.slot) as DistinctField | undefined;
      if (d === undefined) {
        d = new DistinctField(op.at);
        setSlot(rec, this.slot, d);
      } else {
        before = distinctBytes(d);
      }
    } else {
      rec = this.readField(op.key, op.field);
      d = rec === undefined ? undefined : (getSlot(rec, this.slot) as DistinctField);
      if (d !== undefined) before = distinctBytes(d);
    }
    if (rec === undefined || d === undefined) return { distinct: 0, few: 0, memberSeen: false };
    if (op.at > d.end) d.end = op.at;
    const start = d.end - op.windowMs;
    // Map order is last-seen order (a late event is appended, so it is only nearly sorted):
    // prune from the front while stale.
    for (const [m, tally] of d.members) {
      if ((tally[0] as number) > start) break;
      d.members.delete(m);
      d.chars -= strBytes(m);
    }
    let memberSeen = false;
    if (adding && op.at > start) {
      const member = op.member as string;
      const tally = d.members.get(member);
      if (tally !== undefined && (tally[0] as number) > start) {
        memberSeen = true;
        tally[1] = (tally[1] as number) + 1;
        if (op.at > (tally[0] as number)) {
          tally[0] = op.at;
          d.members.delete(member);
          d.members.set(member, tally);
        }
      } else {
        if (tally !== undefined) d.members.delete(member);
        else d.chars += strBytes(member);
        d.members.set(member, [op.at, 1]);
        const max = op.maxMembers ?? DEFAULT_DISTINCT_MAX_MEMBERS;
        const oldest = d.members.size > max ? firstKey(d.members) : undefined;
        if (oldest !== undefined) {
          d.members.delete(oldest);
          d.chars -= strBytes(oldest);
        }
      }
    }
    this.charge(rec, distinctBytes(d) - before);
    if (op.fewTries === undefined) return { distinct: d.members.size, few: 0, memberSeen };
    let distinct = 0;
    let few = 0;
    for (const tally of d.members.values()) {
      if ((tally[0] as number) <= start) continue;
      distinct++;
      if ((tally[1] as number) <= op.fewTries) few++;
    }
    return { distinct, few, memberSeen };
  }

  private lastSwap(op: LastSwapOp): LastResult {
    const storing = op.value !== undefined;
    const rec = storing ? this.write(op.key, op.ttlMs, op.field) : this.readField(op.key, op.field);
    if (rec === undefined) return { previous: null };
    const slot = this.slot;
    const at = getSlot(rec, slot) as number | undefined;
    const stored = getSlot(rec, slot + 1) as StateValue | undefined;
    const previous = at === undefined ? null : { at, value: stored as StateValue };
    if (storing && (at === undefined || op.at >= at)) {
      // A stored text is usually built by concatenation (a place and its details), and lives as long as the record.
      const value = typeof op.value === 'string' ? flatten(op.value) : (op.value as StateValue);
      setSlot(rec, slot, op.at);
      setSlot(rec, slot + 1, value);
      this.charge(rec, NUMBER + valueBytes(value) - fieldBytes(at, stored));
    }
    return { previous };
  }

  private seenAdd(op: SeenAddOp): SeenResult {
    const rec = op.readOnly ? this.readField(op.key, op.field) : this.write(op.key, op.ttlMs, op.field);
    if (rec === undefined) return { seen: false, size: 0 };
    const slot = this.slot;
    const at = seenSeconds(op.at);
    const first = getSlot(rec, slot) as string | SeenList | undefined;
    if (first === undefined) {
      // Only a write reaches here (a read of an empty field answered above).
      const member = this.intern(op.member);
      setSlot(rec, slot, member);
      setSlot(rec, slot + 1, at);
      this.charge(rec, memberBytes(member));
      return { seen: false, size: 1 };
    }
    const since = seenSeconds(op.at - op.withinMs);
    if (typeof first === 'string') {
      const time = getSlot(rec, slot + 1) as number;
      if (first === op.member) {
        if (!op.readOnly && time < at) setSlot(rec, slot + 1, at);
        return { seen: time >= since, size: 1 };
      }
      if (op.readOnly) return { seen: false, size: 1 };
      const max = op.maxMembers ?? DEFAULT_SEEN_MAX_MEMBERS;
      const member = this.intern(op.member);
      if (max <= 1) {
        // Room for one: the older of the two goes (on a tie the newcomer stays, as with larger sets).
        if (at >= time) {
          setSlot(rec, slot, member);
          setSlot(rec, slot + 1, at);
          this.charge(rec, memberBytes(member) - memberBytes(first));
        }
        return { seen: false, size: 1 };
      }
      const list: SeenList = [first, time, member, at];
      setSlot(rec, slot, list);
      setSlot(rec, slot + 1, undefined);
      this.charge(rec, seenListBytes(list) - memberBytes(first));
      return { seen: false, size: 2 };
    }
    let s = first;
    let found = -1;
    for (let i = 0; i < s.length; i += 2) {
      if (s[i] === op.member) {
        found = i;
        break;
      }
    }
    const seen = found >= 0 && (s[found + 1] as number) >= since;
    if (!op.readOnly) {
      if (found >= 0) {
        if ((s[found + 1] as number) < at) s[found + 1] = at;
      } else {
        // A fresh exact-size array: push() would reserve room for ~16 more slots per set.
        const member = this.intern(op.member);
        s = s.concat(member, at);
        let delta = 16 + memberBytes(member);
        const max = op.maxMembers ?? DEFAULT_SEEN_MAX_MEMBERS;
        if (s.length > max * 2) delta -= 16 + memberBytes(dropOldestSeen(s));
        setSlot(rec, slot, s);
        this.charge(rec, delta);
      }
    }
    return { seen, size: s.length / 2 };
  }

  private intern(member: string): string {
    if (member.length > INTERN_MAX_LENGTH) return flatten(member);
    let shared = this.members.get(member);
    if (shared === undefined) {
      if (this.members.size >= INTERN_MAX_ENTRIES) this.members.clear();
      shared = flatten(member);
      this.members.set(shared, shared);
    }
    return shared;
  }

  private counterAdd(op: CounterAddOp): CounterResult {
    const rec = this.write(op.key, op.ttlMs, op.field);
    const value = ((getSlot(rec, this.slot) as number | undefined) ?? 0) + op.amount;
    setSlot(rec, this.slot, value);
    return { value };
  }

  private sequenceMark(op: SequenceMarkOp): SequenceResult {
    const step: SequenceStep = { stage: op.stage, at: op.at, ref: op.ref };
    if (op.stage === 0) {
      const rec = this.write(op.key, op.windowMs, op.field);
      let seq = getSlot(rec, this.slot) as SequenceField | undefined;
      const before = seq === undefined ? 0 : sequenceBytes(seq);
      if (seq === undefined) {
        seq = [];
        setSlot(rec, this.slot, seq);
      }
      const current = seq[0];
      // Keep the later start: it leaves the most time for the rest of the sequence.
      if (current === undefined || current === null || current.start <= op.at) seq[0] = { start: op.at, at: op.at, steps: [step] };
      this.charge(rec, sequenceBytes(seq) - before);
      return { steps: [step] };
    }
    const rec = this.readField(op.key, op.field);
    const seq = rec === undefined ? undefined : (getSlot(rec, this.slot) as SequenceField);
    const prev = seq?.[op.stage - 1];
    if (rec === undefined || seq === undefined || prev === undefined || prev === null) return { steps: null };
    if (prev.at > op.at || op.at - prev.start > op.windowMs) return { steps: null };
    // concat makes an exact-size array; a spread would reserve room for ~16 more steps.
    const steps = prev.steps.concat(step);
    const current = seq[op.stage];
    if (current === undefined || current === null || current.start <= prev.start) {
      const before = sequenceBytes(seq);
      seq[op.stage] = { start: prev.start, at: op.at, steps };
      this.charge(rec, sequenceBytes(seq) - before);
    }
    this.write(op.key, op.windowMs, op.field);
    return { steps };
  }

  private orderedAdd(op: OrderedAddOp): SequenceResult {
    const rec = this.write(op.key, op.windowMs, op.field);
    const slot = this.slot;
    const current = getSlot(rec, slot);
    const before = fieldBytes(current, getSlot(rec, slot + 1));
    const field = current instanceof OrderedField ? current : new OrderedField([]);
    if (field !== current) setSlot(rec, slot, field);
    const lists = field.stages;
    let steps: SequenceStep[] | null = null;
    // The chain is looked for before this event's own sightings are added: it serves as one stage.
    for (const stage of op.stages) {
      steps = chainThrough(lists, op.stageCount, stage, op.at, op.ref, op.windowMs);
      if (steps !== null) break;
    }
    const max = op.maxPerStage ?? DEFAULT_ORDERED_MAX_PER_STAGE;
    for (const stage of op.stages) {
      const list = (lists[stage] ??= []);
      let i = list.length;
      while (i > 0 && (list[i - 1] as Sightings[number]).at > op.at) i--;
      list.splice(i, 0, { at: op.at, ref: op.ref });
      if (list.length > max) list.splice(0, list.length - max);
    }
    this.charge(rec, orderedBytes(field) - before);
    return { steps };
  }

  private alertOpen(op: AlertOpenOp): AlertOpenResult {
    const rec = this.write(op.key, op.windowMs, op.field);
    const slot = this.slot;
    const current = getSlot(rec, slot);
    if (current instanceof AlertField && isLive(current, op.at, op.windowMs)) {
      const before = alertBytes(current);
      current.count++;
      if (op.at > current.lastSeen) current.lastSeen = op.at;
      if (op.at < current.firstSeen) current.firstSeen = op.at;
      if (op.eventId !== undefined) {
        const ids = current.eventIds;
        ids.push(op.eventId);
        current.chars += strBytes(op.eventId);
        const excess = ids.length - (op.maxEventIds ?? DEFAULT_ALERT_MAX_EVENT_IDS);
        if (excess > 0) {
          for (let i = 0; i < excess; i++) current.chars -= strBytes(ids[i] as string);
          ids.splice(0, excess);
        }
      }
      this.charge(rec, alertBytes(current) - before);
      return { alert: snapshot(current), opened: false };
    }
    const fresh = new AlertField(op.id, op.at, op.eventId);
    const before = fieldBytes(current, getSlot(rec, slot + 1));
    setSlot(rec, slot, fresh);
    this.charge(rec, alertBytes(fresh) - before);
    if (current === undefined) this.boundAlerts(op.key, rec, slot, op.maxAlerts ?? DEFAULT_ALERT_MAX_TYPES);
    return { alert: snapshot(fresh), opened: true };
  }

  /**
   * Past `max` alerts in the record, empties the field of the alert other than the one at `kept`
   * last seen longest ago (on a tie, the smaller type name). Emptied fields keep their names (and
   * slots) until they are as many as the record's other fields; then the record is rebuilt
   * without them, so a subject that cycles through more types than the bound pays for a rebuild
   * once per `max` new types, not at each one.
   */
  private boundAlerts(key: string, rec: Rec, kept: number, max: number): void {
    const names = rec.l.names;
    if (names.length <= max) return;
    let alerts = 0;
    let oldest = -1;
    let o: AlertField | undefined;
    for (let i = 0; i < names.length; i++) {
      const a = getSlot(rec, 2 * i);
      if (!(a instanceof AlertField)) continue;
      alerts++;
      if (2 * i === kept) continue;
      if (o === undefined || a.lastSeen < o.lastSeen || (a.lastSeen === o.lastSeen && (names[i] as string) < (names[oldest / 2] as string))) {
        o = a;
        oldest = 2 * i;
      }
    }
    if (alerts <= max || o === undefined) return;
    setSlot(rec, oldest, undefined);
    setSlot(rec, oldest + 1, undefined);
    this.charge(rec, -alertBytes(o));
    if (names.length < 2 * max) return;
    const copy = withoutEmptyFields(rec);
    this.records.set(key, copy);
    this.charge(copy, recordBytes(copy) - recordBytes(rec));
  }

  private alertPeek(op: AlertPeekOp): AlertPeekResult {
    const rec = this.readField(op.key, op.field);
    const current = rec === undefined ? undefined : getSlot(rec, this.slot);
    return { alert: current instanceof AlertField && isLive(current, op.at, op.windowMs) ? snapshot(current) : null };
  }

  private remove(op: DeleteOp): DeleteResult {
    const rec = this.read(op.key);
    if (rec === undefined) return { deleted: false };
    if (op.field === '*') {
      this.drop(op.key, rec);
      return { deleted: true };
    }
    if (this.readField(op.key, op.field) === undefined) return { deleted: false };
    // The name stays in the layout; the emptied slots are reused if the field comes back.
    this.charge(rec, -fieldBytes(getSlot(rec, this.slot), getSlot(rec, this.slot + 1)));
    setSlot(rec, this.slot, undefined);
    setSlot(rec, this.slot + 1, undefined);
    return { deleted: true };
  }
}

/** A record as dump() writes it: key, seconds left, estimated bytes, field names, slots. */
type DumpedRecord = [string, number, number, readonly string[], unknown[]];

/** A MemoryStateStore's records as plain data (dump() and restore()). */
export interface StateDump {
  readonly scopes: readonly (readonly [string, AccountScope])[];
  readonly records: readonly DumpedRecord[];
}

/** Whether a text in plain data (strings, object keys, in arrays and objects) satisfies `mentions`. */
function textsMention(value: unknown, mentions: (text: string) => boolean): boolean {
  if (typeof value === 'string') return mentions(value);
  if (Array.isArray(value)) return value.some((v) => textsMention(v, mentions));
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([k, v]) => mentions(k) || textsMention(v, mentions));
  return false;
}

/** A slot as plain data: the field classes become tagged arrays, everything else is data already. */
function dumpSlot(v: unknown): unknown {
  if (v instanceof WindowField) return { $w: [v.end, v.head, v.times, v.amounts, v.sum] };
  if (v instanceof DistinctField) return { $d: [v.end, [...v.members], v.chars] };
  if (v instanceof AlertField) return { $a: [v.id, v.count, v.firstSeen, v.lastSeen, v.eventIds, v.chars] };
  return v;
}

function restoreSlot(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  if ('$w' in v) {
    const [end, head, times, amounts, sum] = v.$w as [number, number, number[], number[] | null, number];
    return Object.assign(new WindowField(end), { head, times, amounts, sum });
  }
  if ('$d' in v) {
    const [end, members, chars] = v.$d as [number, [string, number[]][], number];
    return Object.assign(new DistinctField(end), { members: new Map(members), chars });
  }
  if ('$a' in v) {
    const [id, count, firstSeen, lastSeen, eventIds, chars] = v.$a as [string, number, number, number, string[], number];
    return Object.assign(new AlertField(id, firstSeen, undefined), { count, firstSeen, lastSeen, eventIds, chars });
  }
  return v;
}

function isLive(alert: AlertField, at: number, windowMs: number): boolean {
  return at >= alert.lastSeen - windowMs && at <= alert.lastSeen + windowMs;
}

function snapshot(a: AlertField): AlertState {
  return { id: a.id, count: a.count, firstSeen: a.firstSeen, lastSeen: a.lastSeen, eventIds: a.eventIds.slice() };
}

function pruneWindow(w: WindowField, start: number): void {
  let n = 0;
  while (w.head + n < w.times.length && (w.times[w.head + n] as number) <= start) n++;
  if (n > 0) pruneCount(w, n);
}

/** Drops the n oldest live entries. */
function pruneCount(w: WindowField, n: number): void {
  if (w.amounts === null) {
    w.sum -= n;
  } else {
    for (let i = w.head; i < w.head + n; i++) w.sum -= w.amounts[i] as number;
  }
  w.head += n;
  if (w.head * 2 >= w.times.length) {
    dropFront(w.times, w.head);
    if (w.amounts !== null) dropFront(w.amounts, w.head);
    w.head = 0;
  }
}

/** Removes the first n elements in place (splice would allocate an array of the removed ones). */
function dropFront(a: number[], n: number): void {
  a.copyWithin(0, n);
  a.length -= n;
}

function insertWindow(w: WindowField, at: number, amount: number): void {
  if (amount !== 1 && w.amounts === null) w.amounts = w.times.map(() => 1);
  const i = sortedIndex(w.times, w.head, at);
  if (i === w.times.length) {
    w.times.push(at);
    w.amounts?.push(amount);
  } else {
    w.times.splice(i, 0, at);
    w.amounts?.splice(i, 0, amount);
  }
  w.sum += amount;
}

/** First index whose time is greater than `at` (stable: equal times keep arrival order). */
function sortedIndex(times: readonly number[], from: number, at: number): number {
  let lo = from;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Removes the member seen longest ago; answers it. */
function dropOldestSeen(s: SeenList): string {
  let oldest = 0;
  for (let i = 2; i < s.length; i += 2) if ((s[i + 1] as number) < (s[oldest + 1] as number)) oldest = i;
  const member = s[oldest] as string;
  s.splice(oldest, 2);
  return member;
}
