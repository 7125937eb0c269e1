import type { WindowShape } from './windows.js';

/**
 * Sliding-window counters for many keys, each key in a fixed-size slot of shared typed
 * arrays: per window a running sum and a ring of bucket counts, plus the ring's newest
 * bucket index (its head). Memory per key is constant whatever the traffic; keys whose
 * windows have all emptied are forgotten by sweep() and their slots reused.
 *
 * Counts are Uint32: a window holds at most its limit, and limits stay far below 2^32.
 */
export class WindowSlab {
  private readonly slots = new Map<string, number>();
  private readonly freeSlots: number[] = [];
  private nextFresh = 0;
  private capacity: number;
  private counts: Uint32Array;
  private heads: Float64Array;
  /** Offset of each window's [sum, bucket 0 .. bucket n-1] inside a slot of `counts`. */
  private readonly offsets: readonly number[];
  private readonly countsPerSlot: number;
  private readonly windows: number;

  constructor(
    private readonly shapes: readonly WindowShape[],
    initialCapacity = 256,
  ) {
    const offsets: number[] = [];
    let size = 0;
    for (const shape of shapes) {
      offsets.push(size);
      size += 1 + shape.buckets;
    }
    this.offsets = offsets;
    this.countsPerSlot = size;
    this.windows = shapes.length;
    this.capacity = Math.max(1, initialCapacity);
    this.counts = new Uint32Array(this.capacity * size);
    this.heads = new Float64Array(this.capacity * this.windows);
  }

  /** Keys currently held. */
  get size(): number {
    return this.slots.size;
  }

  /** Typed-array bytes of one key's slot (the Map entry and key string come on top). */
  get slotBytes(): number {
    return this.countsPerSlot * Uint32Array.BYTES_PER_ELEMENT + this.windows * Float64Array.BYTES_PER_ELEMENT;
  }

  /** The slot of `key`, or -1 when it has none. */
  find(key: string): number {
    return this.slots.get(key) ?? -1;
  }

  /** The slot of `key`, allocated empty when it has none. */
  slotFor(key: string): number {
    const existing = this.slots.get(key);
    if (existing !== undefined) return existing;
    const slot = this.freeSlots.pop() ?? this.freshSlot();
    this.slots.set(key, slot);
    return slot;
  }

  /**
   * Moves every window of `slot` to `now`, emptying the buckets that left. Time never
   * runs backwards for a key: an earlier `now` (clock skew) counts in the current head.
   */
  advance(slot: number, now: number): void {
    for (let w = 0; w < this.windows; w++) {
      const shape = this.shapes[w] as WindowShape;
      const bucket = Math.floor(now / shape.bucketMs);
      const headAt = slot * this.windows + w;
      const head = this.heads[headAt] as number;
      if (bucket <= head) continue;
      this.heads[headAt] = bucket;
      const base = slot * this.countsPerSlot + (this.offsets[w] as number);
      const n = shape.buckets;
      if (bucket - head >= n) {
        this.counts.fill(0, base, base + 1 + n);
        continue;
      }
      let sum = this.counts[base] as number;
      for (let b = head + 1; b <= bucket; b++) {
        const at = base + 1 + (b % n);
        sum -= this.counts[at] as number;
        this.counts[at] = 0;
      }
      this.counts[base] = sum;
    }
  }

  /** Units counted in window `w` (as of the last advance). */
  sum(slot: number, w: number): number {
    return this.counts[slot * this.countsPerSlot + (this.offsets[w] as number)] as number;
  }

  /** Counts `units` in the head bucket of window `w`. */
  add(slot: number, w: number, units: number): void {
    const n = (this.shapes[w] as WindowShape).buckets;
    const base = slot * this.countsPerSlot + (this.offsets[w] as number);
    const head = this.heads[slot * this.windows + w] as number;
    this.counts[base] = (this.counts[base] as number) + units;
    const at = base + 1 + (head % n);
    this.counts[at] = (this.counts[at] as number) + units;
  }

  /**
   * Time (ms) at which at least `units` of window `w`'s counted units will have left it,
   * oldest first; Infinity when the window holds fewer than `units`.
   */
  freedAt(slot: number, w: number, units: number): number {
    const shape = this.shapes[w] as WindowShape;
    const n = shape.buckets;
    const base = slot * this.countsPerSlot + (this.offsets[w] as number);
    if (units > (this.counts[base] as number)) return Infinity;
    const head = this.heads[slot * this.windows + w] as number;
    let freed = 0;
    for (let b = Math.max(0, head - n + 1); b <= head; b++) {
      freed += this.counts[base + 1 + (b % n)] as number;
      if (freed >= units) return (b + n) * shape.bucketMs;
    }
    return Infinity;
  }

  /** Forgets the keys whose windows are all empty at `now`; returns how many. */
  sweep(now: number): number {
    let forgotten = 0;
    for (const [key, slot] of this.slots) {
      if (!this.emptyAt(slot, now)) continue;
      this.slots.delete(key);
      this.counts.fill(0, slot * this.countsPerSlot, (slot + 1) * this.countsPerSlot);
      this.heads.fill(0, slot * this.windows, (slot + 1) * this.windows);
      this.freeSlots.push(slot);
      forgotten++;
    }
    return forgotten;
  }

  clear(): void {
    this.slots.clear();
    this.freeSlots.length = 0;
    this.nextFresh = 0;
    this.counts.fill(0);
    this.heads.fill(0);
  }

  private emptyAt(slot: number, now: number): boolean {
    for (let w = 0; w < this.windows; w++) {
      const shape = this.shapes[w] as WindowShape;
      const head = this.heads[slot * this.windows + w] as number;
      if ((head + shape.buckets) * shape.bucketMs > now && this.sum(slot, w) > 0) return false;
    }
    return true;
  }

  private freshSlot(): number {
    if (this.nextFresh === this.capacity) this.grow();
    return this.nextFresh++;
  }

  private grow(): void {
    this.capacity *= 2;
    const counts = new Uint32Array(this.capacity * this.countsPerSlot);
    counts.set(this.counts);
    this.counts = counts;
    const heads = new Float64Array(this.capacity * this.windows);
    heads.set(this.heads);
    this.heads = heads;
  }
}
