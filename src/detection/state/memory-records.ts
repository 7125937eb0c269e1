/**
 * The compact record layout of MemoryStateStore. A million actors means millions of records, so
 * each is one small object holding only values; the field names live in a Layout shared by
 * every record with the same fields in the same order (the idea of V8's hidden classes, here
 * explicit so records need no per-field name slots and no property dictionaries).
 *
 * Every field owns two consecutive value slots (what goes in them depends on the op kind, see
 * memory-state-store.ts). Records come in three sizes, chosen by field count, with their slots
 * as in-object properties: a 2-field record is 80 bytes, a 4-field one 112, where a JS array
 * would cost 48 bytes of headers more and a plain object spills past 4 properties.
 */

/** Field names of a record, in slot order; transitions are shared so a layout is created once per field sequence. */
export class Layout {
  private readonly next = new Map<string, Layout>();
  constructor(readonly names: readonly string[]) {}

  /** The layout with `name` appended (shared, up to LAYOUTS_MAX layouts; beyond that unshared). */
  with(name: string): Layout {
    let layout = this.next.get(name);
    if (layout === undefined) {
      layout = new Layout([...this.names, name]);
      if (layoutCount < LAYOUTS_MAX) {
        this.next.set(name, layout);
        layoutCount++;
      }
    }
    return layout;
  }

  /** First slot of `name`, or -1. */
  slotOf(name: string): number {
    const names = this.names;
    for (let i = 0; i < names.length; i++) if (names[i] === name) return 2 * i;
    return -1;
  }
}

// Field names come from detector code, so layouts are few; the cap only guards against a caller
// that names fields from data.
const LAYOUTS_MAX = 10_000;
let layoutCount = 0;
export const EMPTY_LAYOUT = new Layout([]);

/**
 * Record header: its layout, its expiry (whole seconds since the store began) and the store's
 * estimate of its bytes (see memory-state-store.ts), both small integers V8 keeps unboxed.
 */
export interface Rec {
  l: Layout;
  e: number;
  b: number;
}

class Rec2 implements Rec {
  s0: unknown = undefined;
  s1: unknown = undefined;
  s2: unknown = undefined;
  s3: unknown = undefined;
  constructor(
    public l: Layout,
    public e: number,
    public b: number,
  ) {}
}

class Rec4 implements Rec {
  s0: unknown = undefined;
  s1: unknown = undefined;
  s2: unknown = undefined;
  s3: unknown = undefined;
  s4: unknown = undefined;
  s5: unknown = undefined;
  s6: unknown = undefined;
  s7: unknown = undefined;
  constructor(
    public l: Layout,
    public e: number,
    public b: number,
  ) {}
}

/** Past four fields (alert records of much-targeted subjects): the first eight slots in-object, the rest in `x`. */
class RecN extends Rec4 {
  x: unknown[] = [];
}

type AnyRec = Rec & Partial<Rec4> & { x?: unknown[] };

/** Slots a record of this class holds. */
const capacityOf = (rec: Rec): number => (rec instanceof RecN ? Infinity : rec instanceof Rec4 ? 8 : 4);

export function newRecord(e: number): Rec {
  return new Rec2(EMPTY_LAYOUT, e, 0);
}

/**
 * Estimated heap bytes of the record object itself: header and slots, and past four fields the
 * array of further slots and the field names (a layout reached by a path no other record shares
 * is the record's own). What the slots point to is counted by the store, per field.
 */
export function recordBytes(rec: Rec): number {
  if (!(rec instanceof RecN)) return rec instanceof Rec4 ? 112 : 80;
  const fields = rec.l.names.length;
  return 120 + 48 + 8 * (2 * fields - 8) + 8 * fields;
}

export function getSlot(rec: Rec, i: number): unknown {
  const r = rec as AnyRec;
  switch (i) {
    case 0:
      return r.s0;
    case 1:
      return r.s1;
    case 2:
      return r.s2;
    case 3:
      return r.s3;
    case 4:
      return r.s4;
    case 5:
      return r.s5;
    case 6:
      return r.s6;
    case 7:
      return r.s7;
    default:
      return r.x?.[i - 8];
  }
}

export function setSlot(rec: Rec, i: number, v: unknown): void {
  const r = rec as AnyRec;
  switch (i) {
    case 0:
      r.s0 = v;
      return;
    case 1:
      r.s1 = v;
      return;
    case 2:
      r.s2 = v;
      return;
    case 3:
      r.s3 = v;
      return;
    case 4:
      r.s4 = v;
      return;
    case 5:
      r.s5 = v;
      return;
    case 6:
      r.s6 = v;
      return;
    case 7:
      r.s7 = v;
      return;
    default: {
      const x = r.x as unknown[];
      while (x.length < i - 8) x.push(undefined);
      x[i - 8] = v;
    }
  }
}

/**
 * `rec` with field `name` added (empty slots). Answers the same object when it has room, else a
 * larger copy the caller must store in place of the old one.
 */
export function withField(rec: Rec, name: string): Rec {
  const layout = rec.l.with(name);
  const needed = layout.names.length * 2;
  if (needed <= capacityOf(rec)) {
    rec.l = layout;
    return rec;
  }
  const bigger: Rec = needed <= 8 ? new Rec4(layout, rec.e, rec.b) : new RecN(layout, rec.e, rec.b);
  const used = rec.l.names.length * 2;
  for (let i = 0; i < used; i++) setSlot(bigger, i, getSlot(rec, i));
  return bigger;
}

/**
 * A copy of `rec` without its emptied fields (a deleted or dropped field keeps its name in the
 * layout until then). The caller stores the copy in place of `rec`; its `b` is `rec`'s, for the
 * caller to adjust.
 */
export function withoutEmptyFields(rec: Rec): Rec {
  let copy = newRecord(rec.e);
  const names = rec.l.names;
  for (let i = 0; i < names.length; i++) {
    const first = getSlot(rec, 2 * i);
    if (first === undefined) continue;
    copy = withField(copy, names[i] as string);
    const to = copy.l.names.length * 2 - 2;
    setSlot(copy, to, first);
    setSlot(copy, to + 1, getSlot(rec, 2 * i + 1));
  }
  copy.b = rec.b;
  return copy;
}
