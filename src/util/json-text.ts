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
