/**
 * The API writes every member name in snake_case. Internal types keep TypeScript's camelCase;
 * documents are converted where they leave for storage or an answer, and converting a name
 * that is already snake_case changes nothing (so documents stored in camelCase by earlier
 * versions read the same after conversion).
 */

const names = new Map<string, string>();

/** `browserVersion` -> `browser_version`; `tor_exit` stays. */
export function snakeCase(name: string): string {
  let converted = names.get(name);
  if (converted === undefined) {
    converted = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    // Names are member names of Vigil's own documents: a small, fixed set.
    if (names.size < 1_000) names.set(name, converted);
  }
  return converted;
}

/** A copy of a JSON-like value with every object member name in snake_case; values are unchanged. */
export function snakeCaseKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  const record: Readonly<Record<string, unknown>> = Object(value);
  const out: Record<string, unknown> = {};
  for (const key in record) {
    const member = record[key];
    out[snakeCase(key)] = member === null || typeof member !== 'object' ? member : snakeCaseKeys(member);
  }
  return out;
}
