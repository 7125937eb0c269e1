/**
 * A flat copy of a string made by concatenation. V8 keeps `a + b` (and each `${}` of a template)
 * as a tree of the parts, one 32-byte node per join, and every reader that needs the characters
 * in one piece (a Map lookup's hash, a structured clone, a socket write) walks that tree again.
 * A text kept for long or pasted into many others should be one flat string.
 */
export function flatten(s: string): string {
  // Strings under 13 characters are always flat. A one-element join answers its element as it
  // is, so the copy joins two parts.
  return s.length < 13 ? s : [s.slice(0, 1), s.slice(1)].join('');
}
