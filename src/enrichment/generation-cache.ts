/**
 * A bounded memo for lookups whose inputs repeat (user agents, client addresses): two
 * generations of at most `limit` entries each. Hits are promoted to the young generation; when
 * it fills, the old generation is dropped whole, so the hot keys stay without per-hit bookkeeping.
 * Values must be immutable: one value is shared by every event with the same key. A value is
 * never `undefined`, which is how a lookup tells a miss (`null` can stand for "looked up, none").
 */
export class GenerationCache<K, V extends NonNullable<unknown> | null> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();

  constructor(private readonly limit: number) {}

  get(key: K, compute: (key: K) => V): V {
    const young = this.young.get(key);
    if (young !== undefined) return young;
    const old = this.old.get(key);
    const value = old !== undefined ? old : compute(key);
    this.put(key, value);
    return value;
  }

  /** The value, if either generation holds it (a hit in the old one is promoted). */
  peek(key: K): V | undefined {
    const young = this.young.get(key);
    if (young !== undefined) return young;
    const old = this.old.get(key);
    if (old !== undefined) this.put(key, old);
    return old;
  }

  put(key: K, value: V): void {
    if (this.young.size >= this.limit) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
