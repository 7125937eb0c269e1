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
import { ValueErrorType } from '@sinclair/typebox/errors';
import { fieldOfPointer, mismatchMessage, requiredMessage, unknownMemberMessage } from './schema-text.js';

export interface Problem {
  /** Path of the value in the checked document (`feeds.0.file`), `(body)` for the document itself. */
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

/** A checker for `schema`: the value, typed, or every problem found (one per field, in document order). */
export function schemaCheck<T extends TSchema>(schema: T): (value: unknown) => Checked<Static<T>> {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (compiled.Check(value)) return { ok: true, value };
    const seen = new Set<string>();
    const errors: Problem[] = [];
    for (const error of compiled.Errors(value)) {
      const field = fieldOfPointer(error.path);
      if (seen.has(field)) continue;
      seen.add(field);
      const own = wordingOf(error.schema);
      let message: string;
      if (error.type === ValueErrorType.ObjectRequiredProperty) message = requiredMessage(field);
      else if (error.type === ValueErrorType.ObjectAdditionalProperties) message = own.unknownMessage ?? unknownMemberMessage(field, error.schema);
      else message = own.message ?? mismatchMessage(field, error.schema);
      errors.push({ field, message });
    }
    return { ok: false, errors };
  };
}
