/**
 * The one validator library for JSON from outside that no route schema checks (the feeds
 * manifest, the Sigma field mapping, a dry run's body, ...): a TypeBox schema compiled once, its
 * problems said in words by util/schema-text.ts, one per field, each naming the field. A schema
 * may carry its own wording for its problems as `message` (and an object its wording for a
 * member it does not allow as `unknownMessage`), for rules a pattern states less clearly than
 * words do.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { fieldOfPointer, mismatchMessage, requiredMessage, unknownMemberMessage } from './schema-text.js';

export interface Problem {
  /** Path of the value in the checked document (`feeds.0.file`), `(body)` for the document itself unless it is named. */
  readonly field: string;
  readonly message: string;
}

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly Problem[] };

/** What a schema may add to say its problems in its own words. */
export interface Wording {
  /** Said for any problem of the value itself, e.g. "must be a plain file name in the feeds folder". */
  readonly message?: string;
  /** Said for a member an object does not allow. */
  readonly unknownMessage?: string;
}

const wordingOf = (schema: unknown): Wording => schema as Wording;

/**
 * Problems of a value in words: one per field (the first TypeBox reports), each naming the field.
 * `wordFor` may say a problem in the caller's words; undefined leaves it to the schema.
 */
export function problemsOf(errors: Iterable<ValueError>, wordFor?: (error: ValueError, field: string) => string | undefined, at?: string): Problem[] {
  const seen = new Set<string>();
  const problems: Problem[] = [];
  for (const error of errors) {
    const field = at === undefined ? fieldOfPointer(error.path) : error.path === '' ? at : `${at}.${fieldOfPointer(error.path)}`;
    if (seen.has(field)) continue;
    seen.add(field);
    const own = wordingOf(error.schema);
    const message =
      wordFor?.(error, field) ??
      (error.type === ValueErrorType.ObjectRequiredProperty
        ? requiredMessage(field)
        : error.type === ValueErrorType.ObjectAdditionalProperties
          ? (own.unknownMessage ?? unknownMemberMessage(field, error.schema))
          : (own.message ?? mismatchMessage(field, error.schema)));
    problems.push({ field, message });
  }
  return problems;
}

/**
 * A checker for `schema`: the value, typed, or every problem found (one per field, in document
 * order). `at` names the value where it sits in a larger document (`risk`, so `risk.block`).
 */
export function schemaCheck<T extends TSchema>(schema: T, at?: string): (value: unknown) => Checked<Static<T>> {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => (compiled.Check(value) ? { ok: true, value } : { ok: false, errors: problemsOf(compiled.Errors(value), undefined, at) });
}
