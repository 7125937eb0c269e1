/**
 * A bounded memo for lookups whose inputs repeat (user agents, client addresses): two
 * generations of at most `limit` entries each. Hits are promoted to the young generation; when
 * it fills, the old generation is dropped whole, so the hot keys stay without per-hit bookkeeping.
 * Values must be immutable: one value is shared by every event with the same key.
 */
export class GenerationCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();

  constructor(private readonly limit: number) {}

  get(key: K, compute: (key: K) => V): V {
    if (this.young.has(key)) return this.young.get(key) as V;
    const value = this.old.has(key) ? (this.old.get(key) as V) : compute(key);
    this.put(key, value);
    return value;
  }

  /** The value, if either generation holds it (a hit in the old one is promoted). */
  peek(key: K): V | undefined {
    if (this.young.has(key)) return this.young.get(key);
    if (!this.old.has(key)) return undefined;
    const value = this.old.get(key) as V;
    this.put(key, value);
    return value;
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
