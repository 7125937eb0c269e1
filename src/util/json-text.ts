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

/** Strings JSON.stringify would escape: quotes, backslashes, control characters, surrogates (a lone one is escaped). */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(text), without its cost for the usual string that needs no escape. */
export function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * JSON.stringify of anything but an object or array (undefined for those, which the caller
 * walks), written directly for strings, numbers and booleans; a value JSON cannot hold
 * (undefined, a function) is written as null, as in an array.
 */
export function jsonLeaf(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return jsonString(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return value === null ? 'null' : undefined;
    default:
      return JSON.stringify(value) ?? 'null';
  }
}

/**
 * The JSON text of a parsed JSON value with every object's keys in code-unit order and no
 * whitespace: two bodies that are the same JSON value (whatever their key order or spacing)
 * give the same text. Strings, numbers and booleans are written directly: a JSON.stringify call
 * per key and leaf made this the slowest step of validating an event.
 */
export function canonicalJson(value: unknown): string {
  const leaf = jsonLeaf(value);
  if (leaf !== undefined) return leaf;
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const record: Readonly<Record<string, unknown>> = Object(value);
  const keys = Object.keys(record).sort();
  let text = '{';
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${jsonString(key)}:${canonicalJson(member)}`;
  }
  return `${text}}`;
}
