/**
 * JSON text already made for an object that is never changed afterwards, so the layers that
 * each need it (the idempotency row, the HTTP reply) serialise it once between them. Objects
 * nobody registered are serialised as usual.
 */
const texts = new WeakMap<object, string>();

/** `text` must be what JSON.stringify(value) gives, and `value` must not change afterwards. */
export function rememberJson(value: object, text: string): void {
  texts.set(value, text);
}

export function rememberedJson(value: object): string | undefined {
  return texts.get(value);
}

/** The remembered text, else JSON.stringify(value). */
export function jsonOf(value: object): string {
  return texts.get(value) ?? JSON.stringify(value);
}

/**
 * The JSON text of a parsed JSON value with every object's keys in code-unit order and no
 * whitespace: two bodies that are the same JSON value (whatever their key order or spacing)
 * give the same text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const members = Object.entries(value).filter(([, v]) => v !== undefined);
  members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
