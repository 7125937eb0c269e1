/** The oldest key of a Map (insertion order), or undefined when it is empty. */
export function firstKey<K>(map: ReadonlyMap<K, unknown>): K | undefined {
  for (const key of map.keys()) return key;
  return undefined;
}
