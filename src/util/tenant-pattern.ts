/**
 * The one place that turns text a tenant wrote into a matcher: webhook alert-type filters,
 * Sigma condition name patterns, threat-model event-type globs, wildcards and regular
 * expressions. Nothing else in the service compiles tenant text.
 *
 * Every matcher runs in time bounded by the pattern's size times the text's length, whatever
 * the tenant wrote: globs by a two-pointer matcher that only ever resumes after the last star
 * (consecutive stars collapse into one), regular expressions on RE2JS (RE2 semantics: no
 * backreferences, no lookaround). Each compiled pattern carries its cost, so callers refuse a
 * pattern that is too large before they keep it and budget the work they run with it.
 */
import { RE2JS } from 're2js';
import { errorMessage } from './caught.js';

export const PATTERN_LIMITS = Object.freeze({
  /** Characters of any one pattern. */
  patternLength: 512,
  /** RE2 program instructions of one regular expression (`a.{0,998}b` is about 2,000). */
  regexInstructions: 2_000,
  /** Memory a regular expression's lazy DFA may keep between matches, by RE2JS's own accounting. */
  regexDfaBytes: 64 * 1024,
});

/**
 * Heap a compiled regular expression keeps: its program (about 200 bytes an instruction on
 * RE2JS) and its lazy DFA (whose real size runs to about twice RE2JS's own accounting).
 */
const BYTES_PER_INSTRUCTION = 256;
const DFA_OVERHEAD_FACTOR = 2;

export type PatternResult<T> = { readonly ok: true; readonly pattern: T } | { readonly ok: false; readonly message: string };

export interface TenantRegex {
  /** Instructions of the RE2 program: a match costs at most this much per character of text. */
  readonly instructions: number;
  /** Estimated heap the compiled pattern keeps, its DFA cache at its bound included. */
  readonly memoryBytes: number;
  test(text: string): boolean;
}

const FLAG_BITS: Readonly<Record<string, number>> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL };

/** RE2JS keeps the lazy DFA of a compiled pattern on an internal object. */
interface Re2Internals {
  readonly re2Input?: { readonly dfa?: { stateBudget: number; memBudget: number } };
}

/**
 * Caps the DFA cache of one compiled pattern. RE2JS gives every pattern an 8 MB cache; past its
 * bound the cache is cleared and rebuilt as the match goes on, or the match falls back to the
 * NFA, so a smaller bound costs time per character, never correctness. Answers false when the
 * engine does not have the cache where this expects it (tested, so an upgrade that moves it fails
 * the build instead of leaving patterns unbounded).
 */
export function limitDfaMemory(regex: RE2JS, bytes: number): boolean {
  const dfa = (regex as unknown as Re2Internals).re2Input?.dfa;
  if (dfa === undefined || typeof dfa.memBudget !== 'number' || typeof dfa.stateBudget !== 'number') return false;
  dfa.stateBudget = bytes;
  dfa.memBudget = Math.min(dfa.memBudget, bytes);
  return true;
}

/** `i`, `m` and `s`, as in JavaScript; anything else is refused. */
export function compileTenantRegex(pattern: string, flags = ''): PatternResult<TenantRegex> {
  if (pattern.length > PATTERN_LIMITS.patternLength)
    return { ok: false, message: `a pattern has at most ${PATTERN_LIMITS.patternLength} characters (this one has ${pattern.length})` };
  let bits = 0;
  for (const f of flags) {
    const bit = FLAG_BITS[f];
    if (bit === undefined) return { ok: false, message: `unknown regex flag "${f}": use any of "i", "m", "s"` };
    bits |= bit;
  }
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern, bits);
  } catch (err) {
    return { ok: false, message: `not a valid RE2 regular expression: ${errorMessage(err)}` };
  }
  const instructions = regex.programSize();
  if (instructions > PATTERN_LIMITS.regexInstructions)
    return {
      ok: false,
      message: `compiles to ${instructions} RE2 instructions, over the limit of ${PATTERN_LIMITS.regexInstructions} per pattern (bounded repetitions such as .{0,1000} cost one instruction per repetition)`,
    };
  if (!limitDfaMemory(regex, PATTERN_LIMITS.regexDfaBytes)) return { ok: false, message: 'the regular expression engine cannot bound this pattern' };
  return {
    ok: true,
    pattern: {
      instructions,
      memoryBytes: instructions * BYTES_PER_INSTRUCTION + PATTERN_LIMITS.regexDfaBytes * DFA_OVERHEAD_FACTOR,
      test: (text) => regex.test(text),
    },
  };
}

/** A character written literally inside an RE2 pattern. */
const quote = (c: string): string => (/[\\^$.|?*+()[\]{}]/.test(c) ? `\\${c}` : c);

/** Quotes text so that an RE2 pattern matches it literally. */
export const quoteRegex = (text: string): string => [...text].map(quote).join('');

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

/** Escapes a literal so that wildcardParts reads it back unchanged. */
export const escapeWildcards = (literal: string): string => literal.replace(/[\\*?]/g, (c) => `\\${c}`);

export interface GlobOptions {
  /** `?` matches one character (Sigma wildcards); otherwise only `*` is special and `?` is literal. */
  readonly single?: boolean;
  /** Backslash escapes `*`, `?` and itself (Sigma wildcards). */
  readonly escapes?: boolean;
  readonly ignoreCase?: boolean;
}

export interface TenantGlob {
  /** Pattern elements after collapsing stars: the matcher's work per character of text. */
  readonly size: number;
  readonly memoryBytes: number;
  test(text: string): boolean;
}

const STAR = -1;
const ANY = -2;

/** The glob as a list of UTF-16 code units, STAR and ANY; runs of stars collapse into one. */
function globProgram(pattern: string, options: GlobOptions): Int32Array {
  const out: number[] = [];
  const push = (code: number) => {
    if (code === STAR && out[out.length - 1] === STAR) return;
    out.push(code);
  };
  if (options.escapes === true) {
    for (const part of wildcardParts(pattern)) {
      if (part.wildcard === '*') push(STAR);
      else if (part.wildcard === '?') push(options.single === true ? ANY : '?'.charCodeAt(0));
      else for (let i = 0; i < part.text.length; i++) push(part.text.charCodeAt(i));
    }
  } else {
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i] as string;
      push(c === '*' ? STAR : c === '?' && options.single === true ? ANY : pattern.charCodeAt(i));
    }
  }
  return Int32Array.from(out);
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * Matches the whole text. On a mismatch the matcher returns to the element after the last star
 * and one character further into the text: no earlier star is ever retried, since the last one
 * can absorb whatever an earlier one would have, so the work is at most pattern × text.
 */
function globMatch(program: Int32Array, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  const n = text.length;
  while (t < n) {
    if (p < program.length) {
      const want = program[p] as number;
      if (want === STAR) {
        starP = ++p;
        starT = t;
        continue;
      }
      const code = text.charCodeAt(t);
      if (want === ANY) {
        p++;
        t += isHighSurrogate(code) && t + 1 < n && isLowSurrogate(text.charCodeAt(t + 1)) ? 2 : 1;
        continue;
      }
      if (want === code) {
        p++;
        t++;
        continue;
      }
    }
    if (starP < 0) return false;
    p = starP;
    t = ++starT;
  }
  while (p < program.length && program[p] === STAR) p++;
  return p === program.length;
}

/** Compiles a glob: `*` any run of characters (dots included); see GlobOptions for `?` and escapes. */
export function compileGlob(pattern: string, options: GlobOptions = {}): PatternResult<TenantGlob> {
  if (pattern.length > PATTERN_LIMITS.patternLength)
    return { ok: false, message: `a pattern has at most ${PATTERN_LIMITS.patternLength} characters (this one has ${pattern.length})` };
  const ignoreCase = options.ignoreCase === true;
  const program = globProgram(ignoreCase ? pattern.toLowerCase() : pattern, options);
  return {
    ok: true,
    pattern: {
      size: program.length,
      memoryBytes: 64 + program.length * 4,
      test: ignoreCase ? (text) => globMatch(program, text.toLowerCase()) : (text) => globMatch(program, text),
    },
  };
}

/** A glob compiled once per distinct pattern text, for callers that see the same few patterns on every call. */
export class GlobCache {
  private readonly globs = new Map<string, TenantGlob | null>();
  constructor(
    private readonly options: GlobOptions = {},
    private readonly capacity = 1_000,
  ) {}

  /** False for a pattern that does not compile (over the length limit). */
  matches(pattern: string, text: string): boolean {
    let glob = this.globs.get(pattern);
    if (glob === undefined) {
      const compiled = compileGlob(pattern, this.options);
      glob = compiled.ok ? compiled.pattern : null;
      if (this.globs.size >= this.capacity) this.globs.clear();
      this.globs.set(pattern, glob);
    }
    return glob !== null && glob.test(text);
  }
}
