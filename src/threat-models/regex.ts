/**
 * Every user-supplied pattern runs on RE2JS: a linear-time engine (RE2 semantics), so no rule
 * can make an event's evaluation backtrack exponentially. Constructs RE2 does not have
 * (backreferences, lookaround) are refused when the model is saved.
 */
import { RE2JS } from 're2js';
import { errorMessage } from '../util/caught.js';

export type CompiledRegex = { readonly ok: true; readonly regex: RE2JS } | { readonly ok: false; readonly message: string };

const FLAG_BITS: Readonly<Record<string, number>> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL };

export function compileRegex(pattern: string, flags: string): CompiledRegex {
  let bits = 0;
  for (const f of flags) bits |= FLAG_BITS[f] ?? 0;
  try {
    return { ok: true, regex: RE2JS.compile(pattern, bits) };
  } catch (err) {
    return { ok: false, message: `not a valid RE2 regular expression: ${errorMessage(err)}` };
  }
}

/** A character written literally inside an RE2 pattern. */
const quote = (c: string): string => (/[\\^$.|?*+()[\]{}]/.test(c) ? `\\${c}` : c);

export interface WildcardPart {
  readonly wildcard: '*' | '?' | null;
  readonly text: string;
}

/**
 * Splits a Sigma-style wildcard pattern: `*` any characters, `?` one character, `\*` `\?` `\\`
 * the character itself; a backslash before anything else is a literal backslash.
 */
export function wildcardParts(pattern: string): WildcardPart[] {
  const parts: WildcardPart[] = [];
  let text = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === '*' || next === '?' || next === '\\') {
        text += next;
        i++;
      } else text += '\\';
    } else if (c === '*' || c === '?') {
      if (text) parts.push({ wildcard: null, text });
      text = '';
      parts.push({ wildcard: c, text: '' });
    } else text += c;
  }
  if (text) parts.push({ wildcard: null, text });
  return parts;
}

/** The anchored RE2 pattern of a wildcard pattern. */
export function wildcardRegex(pattern: string): string {
  let out = '';
  for (const part of wildcardParts(pattern)) {
    if (part.wildcard === '*') out += '.*';
    else if (part.wildcard === '?') out += '.';
    else for (const c of part.text) out += quote(c);
  }
  return `^(?:${out})$`;
}

/** Escapes a literal so that wildcardParts reads it back unchanged. */
export const escapeWildcards = (literal: string): string => literal.replace(/[\\*?]/g, (c) => `\\${c}`);
