/**
 * A data subject: the identifiers a person is known by in an account's data, and how an erasure
 * or export decides that a stored text mentions them.
 *
 * A text mentions an identifier when it holds it as a whole token: the characters around it are
 * not ones an identifier continues with (letters, digits, `_ - + @ %`, or a `.`/`:` followed by
 * a letter or digit), so `dana` is found in `login by dana.` and `user=dana` but not in
 * `dana.smith` or `adana`, and `1.2.3.4` in `1.2.3.4:443` but not in `1.2.3.45`. Emails compare
 * without regard to ASCII case; addresses in their canonical text and as sent.
 */
import { formatAddress, parseAddress } from '../util/ip.js';
import { pseudonymOf, type PseudonymKeys, type SubjectKind } from './pseudonym.js';

export { SUBJECT_KINDS, type SubjectKind } from './pseudonym.js';

export interface SubjectIdentifier {
  readonly kind: SubjectKind;
  readonly value: string;
}

/**
 * The identifiers' pseudonyms under the account's key, when the instance has a master secret:
 * events stored with pseudonymised fields mention the person only through them.
 */
export function pseudonymsOf(keys: PseudonymKeys, accountId: string, identifiers: readonly SubjectIdentifier[]): string[] {
  const secret = keys.forAccount(accountId);
  return secret === undefined ? [] : identifiers.map((i) => pseudonymOf(secret, i.kind, i.value));
}

/** What replaces an erased identifier in the rows that are kept (alerts, notes, audit entries). */
export const ERASED = '[erased]';

/** Longest identifier value accepted (an email's limit; the event fields are shorter). */
export const MAX_IDENTIFIER_LENGTH = 320;
/** Most identifiers in one erasure or export. */
export const MAX_IDENTIFIERS = 20;

/**
 * A hint of a value that does not give it away: its first character, an ellipsis and its length,
 * e.g. `d… (16 characters)`. A job and an audit entry show this instead of the identifier.
 */
export function valueHint(value: string): string {
  const first = [...value][0] ?? '';
  return `${first}… (${[...value].length} characters)`;
}

/** The forms of an identifier to look for: as sent and, for an address, its canonical text. */
export function identifierForms(identifier: SubjectIdentifier): string[] {
  const value = identifier.value.trim();
  const forms = new Set<string>([value]);
  if (identifier.kind === 'ip') {
    const address = parseAddress(value);
    if (address !== undefined) forms.add(formatAddress(address));
  }
  if (identifier.kind === 'email') forms.add(asciiLower(value));
  return [...forms].filter((f) => f.length > 0);
}

const asciiLower = (text: string): string => text.replace(/[A-Z]+/g, (s) => s.toLowerCase());

function isWordCode(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 95 /* _ */ ||
    c === 45 /* - */ ||
    c === 43 /* + */ ||
    c === 64 /* @ */ ||
    c === 37 /* % */ ||
    c > 127
  );
}
const isAlnumCode = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c > 127;

interface Needle {
  readonly text: string;
  /** Compared with the ASCII-lower-cased text. */
  readonly folded: boolean;
}

/**
 * Finds and replaces one subject's identifiers in stored text. Built once per job or export from
 * the identifiers (and their pseudonyms); the work per text is bounded by its length times the
 * number of needles, with no pattern compiled from the identifiers.
 */
export class SubjectMatcher {
  private readonly needles: readonly Needle[];

  constructor(identifiers: readonly SubjectIdentifier[], extra: readonly string[] = []) {
    const needles = new Map<string, Needle>();
    for (const identifier of identifiers)
      for (const form of identifierForms(identifier)) {
        const folded = identifier.kind === 'email';
        const text = folded ? asciiLower(form) : form;
        needles.set(`${folded ? 'f' : 'c'}${text}`, { text, folded });
      }
    for (const text of extra) if (text.length > 0) needles.set(`c${text}`, { text, folded: false });
    this.needles = [...needles.values()];
  }

  /** The texts to look for in the database (a store finds a superset of the rows holding them). */
  get searchTexts(): string[] {
    return [...new Set(this.needles.map((n) => n.text))];
  }

  /** Whether the text holds one of the identifiers as a whole token. */
  mentions(text: string): boolean {
    let folded: string | undefined;
    for (const needle of this.needles) {
      const haystack = needle.folded ? (folded ??= asciiLower(text)) : text;
      if (firstMatch(haystack, needle.text, 0) >= 0) return true;
    }
    return false;
  }

  /** The text with every whole-token occurrence of the identifiers replaced by ERASED. */
  redact(text: string): string {
    let out = text;
    for (const needle of this.needles) {
      let from = 0;
      for (;;) {
        const haystack = needle.folded ? asciiLower(out) : out;
        const at = firstMatch(haystack, needle.text, from);
        if (at < 0) break;
        out = out.slice(0, at) + ERASED + out.slice(at + needle.text.length);
        from = at + ERASED.length;
      }
    }
    return out;
  }

  /** Whether any text in a JSON value (strings and object keys) mentions the identifiers. */
  mentionsJson(value: unknown): boolean {
    if (typeof value === 'string') return this.mentions(value);
    if (Array.isArray(value)) return value.some((v) => this.mentionsJson(v));
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) if (this.mentions(k) || this.mentionsJson(v)) return true;
    }
    return false;
  }

  /** A JSON value with its strings and object keys redacted. */
  redactJson(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) return value.map((v) => this.redactJson(v));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[this.redact(k)] = this.redactJson(v);
      return out;
    }
    return value;
  }

  /** A stored column's text redacted: as JSON when it is a JSON object or array, else as text. */
  redactColumn(text: string): string {
    const first = text.charAt(0);
    if (first === '{' || first === '[') {
      try {
        return JSON.stringify(this.redactJson(JSON.parse(text)));
      } catch {
        // Not JSON after all: plain text.
      }
    }
    return this.redact(text);
  }

  /** Whether a stored column's text mentions the identifiers (read as JSON when it is JSON, so escapes are undone). */
  columnMentions(text: string): boolean {
    const first = text.charAt(0);
    if (first === '{' || first === '[') {
      try {
        return this.mentionsJson(JSON.parse(text));
      } catch {
        // Not JSON after all: plain text.
      }
    }
    return this.mentions(text);
  }
}

/** Index of the first whole-token occurrence of `needle` in `text` at or after `from`; -1 when none. */
function firstMatch(text: string, needle: string, from: number): number {
  const continues = (c: number, next: number): boolean => isWordCode(c) || ((c === 46 || c === 58) && isAlnumCode(next));
  for (let at = text.indexOf(needle, from); at >= 0; at = text.indexOf(needle, at + 1)) {
    const before = at > 0 ? text.charCodeAt(at - 1) : -1;
    const end = at + needle.length;
    const after = end < text.length ? text.charCodeAt(end) : -1;
    const afterNext = end + 1 < text.length ? text.charCodeAt(end + 1) : -1;
    // A `:` before an address is a separator (`ip:1.2.3.4`, `::ffff:1.2.3.4`); before anything else
    // it is too, since a key part never continues an identifier leftwards through it.
    const beforeOk = before < 0 || !(isWordCode(before) || (before === 46 && at > 1 && isAlnumCode(text.charCodeAt(at - 2))));
    const afterOk = after < 0 || !continues(after, afterNext) || (after === 58 && !needle.includes(':'));
    if (beforeOk && afterOk) return at;
  }
  return -1;
}
