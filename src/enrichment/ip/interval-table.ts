import type { Address } from '../../util/ip.js';

export interface IntervalArrays {
  readonly v4Start: Uint32Array;
  readonly v4End: Uint32Array;
  readonly v4Value: Int32Array;
  readonly v6Start: Uint32Array;
  readonly v6End: Uint32Array;
  readonly v6Value: Int32Array;
}

/**
 * Disjoint address ranges with an integer value each, IPv4 and IPv6, in sorted typed arrays.
 * A lookup is one binary search (about 17 steps at 100k ranges) with no allocation.
 * Immutable once built: a reload builds a new table and swaps the reference.
 */
export class IntervalTable {
  static readonly EMPTY = new IntervalTable(
    new Uint32Array(0),
    new Uint32Array(0),
    new Int32Array(0),
    new Uint32Array(0),
    new Uint32Array(0),
    new Int32Array(0),
  );

  constructor(
    private readonly v4Start: Uint32Array,
    private readonly v4End: Uint32Array,
    private readonly v4Value: Int32Array,
    /** Four words per range, most significant first. */
    private readonly v6Start: Uint32Array,
    private readonly v6End: Uint32Array,
    private readonly v6Value: Int32Array,
  ) {}

  /** The backing arrays, for a binary cache; treat as read-only. */
  arrays(): IntervalArrays {
    return { v4Start: this.v4Start, v4End: this.v4End, v4Value: this.v4Value, v6Start: this.v6Start, v6End: this.v6End, v6Value: this.v6Value };
  }

  static fromArrays(a: IntervalArrays): IntervalTable {
    const n4 = a.v4Value.length;
    const n6 = a.v6Value.length;
    if (a.v4Start.length !== n4 || a.v4End.length !== n4 || a.v6Start.length !== n6 * 4 || a.v6End.length !== n6 * 4)
      throw new Error('interval arrays of inconsistent lengths');
    return new IntervalTable(a.v4Start, a.v4End, a.v4Value, a.v6Start, a.v6End, a.v6Value);
  }

  get size(): { readonly ipv4: number; readonly ipv6: number } {
    return { ipv4: this.v4Value.length, ipv6: this.v6Value.length };
  }

  /** The value of the range holding the address, or -1. */
  lookup(a: Address): number {
    return a.version === 4 ? this.lookup4(a.w3) : this.lookup6(a.w0, a.w1, a.w2, a.w3);
  }

  private lookup4(v: number): number {
    const starts = this.v4Start;
    let lo = 0;
    let hi = starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((starts[mid] as number) <= v) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && v <= (this.v4End[found] as number) ? (this.v4Value[found] as number) : -1;
  }

  private lookup6(a: number, b: number, c: number, d: number): number {
    const starts = this.v6Start;
    let lo = 0;
    let hi = this.v6Value.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (compareAt(starts, mid * 4, a, b, c, d) <= 0) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && compareAt(this.v6End, found * 4, a, b, c, d) >= 0 ? (this.v6Value[found] as number) : -1;
  }
}

/** Compares the 128-bit key at words[j..j+3] with (a, b, c, d). */
function compareAt(words: Uint32Array, j: number, a: number, b: number, c: number, d: number): number {
  let x = words[j] as number;
  if (x !== a) return x < a ? -1 : 1;
  x = words[j + 1] as number;
  if (x !== b) return x < b ? -1 : 1;
  x = words[j + 2] as number;
  if (x !== c) return x < c ? -1 : 1;
  x = words[j + 3] as number;
  return x === d ? 0 : x < d ? -1 : 1;
}

/** An append-only Uint32Array that doubles when full. */
class Words {
  data = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new Uint32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i] as number;
  }
}

const W = 0xffffffffn;

/**
 * Collects ranges in any order and builds an IntervalTable. Ranges must not overlap: of two
 * overlapping ranges the one that starts later is dropped and counted in `overlaps`.
 */
export class IntervalTableBuilder {
  // v4: first, last, value per range; v6: 4 words first, 4 words last, value per range.
  private readonly v4 = new Words();
  private readonly v6 = new Words();
  overlaps = 0;

  addV4(first: number, last: number, value: number): void {
    this.v4.push(first);
    this.v4.push(last);
    this.v4.push(value);
  }

  addV6Words(f0: number, f1: number, f2: number, f3: number, l0: number, l1: number, l2: number, l3: number, value: number): void {
    const w = this.v6;
    w.push(f0);
    w.push(f1);
    w.push(f2);
    w.push(f3);
    w.push(l0);
    w.push(l1);
    w.push(l2);
    w.push(l3);
    w.push(value);
  }

  addV6(first: bigint, last: bigint, value: number): void {
    const word = (v: bigint, shift: bigint) => Number((v >> shift) & W);
    this.addV6Words(
      word(first, 96n),
      word(first, 64n),
      word(first, 32n),
      word(first, 0n),
      word(last, 96n),
      word(last, 64n),
      word(last, 32n),
      word(last, 0n),
      value,
    );
  }

  build(): IntervalTable {
    const v4 = this.buildV4();
    const v6 = this.buildV6();
    return new IntervalTable(v4.start, v4.end, v4.value, v6.start, v6.end, v6.value);
  }

  private buildV4() {
    const w = this.v4;
    const n = w.length / 3;
    const order = sortedOrder(n, (i, j) => w.get(i * 3) - w.get(j * 3));
    const start = new Uint32Array(n);
    const end = new Uint32Array(n);
    const value = new Int32Array(n);
    let kept = 0;
    let lastEnd = -1;
    for (let k = 0; k < n; k++) {
      const i = order ? (order[k] as number) : k;
      const first = w.get(i * 3);
      if (first <= lastEnd) {
        this.overlaps++;
        continue;
      }
      lastEnd = w.get(i * 3 + 1);
      start[kept] = first;
      end[kept] = lastEnd;
      value[kept] = w.get(i * 3 + 2);
      kept++;
    }
    return { start: start.slice(0, kept), end: end.slice(0, kept), value: value.slice(0, kept) };
  }

  private buildV6() {
    const w = this.v6;
    const n = w.length / 9;
    const order = sortedOrder(n, (i, j) => compareWords(w.data, i * 9, j * 9));
    const start = new Uint32Array(n * 4);
    const end = new Uint32Array(n * 4);
    const value = new Int32Array(n);
    let kept = 0;
    let lastEnd = -1; // offset in `w` of the last kept range's end
    for (let k = 0; k < n; k++) {
      const i = order ? (order[k] as number) : k;
      if (lastEnd >= 0 && compareWords(w.data, i * 9, lastEnd) <= 0) {
        this.overlaps++;
        continue;
      }
      start.set(w.data.subarray(i * 9, i * 9 + 4), kept * 4);
      end.set(w.data.subarray(i * 9 + 4, i * 9 + 8), kept * 4);
      value[kept] = w.get(i * 9 + 8);
      lastEnd = i * 9 + 4;
      kept++;
    }
    return { start: start.slice(0, kept * 4), end: end.slice(0, kept * 4), value: value.slice(0, kept) };
  }
}

function compareWords(words: Uint32Array, i: number, j: number): number {
  for (let k = 0; k < 4; k++) {
    const x = words[i + k] as number;
    const y = words[j + k] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Indices 0..n-1 sorted by `compare`; undefined when the input is already in order. */
function sortedOrder(n: number, compare: (i: number, j: number) => number): Uint32Array | undefined {
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) if (compare(i - 1, i) > 0) sorted = false;
  if (sorted) return undefined;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order.sort(compare);
}
