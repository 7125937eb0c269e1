import { Type, type TInteger } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';
import { mismatchMessage } from '../util/schema-text.js';
import { readQueryTime, type TimeReading } from '../util/time-text.js';
import { ApiError } from './errors.js';

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'Error code, e.g. INVALID_EVENT' }),
    message: Type.String(),
    request_id: Type.String(),
    retry_after: Type.Optional(Type.Integer({ description: 'Seconds to wait before retrying, on 429 and 503 OVERLOADED' })),
    details: Type.Optional(
      Type.Array(Type.Object({ index: Type.Optional(Type.Integer()), field: Type.String(), message: Type.String() }), {
        description: 'At most 100; details_total counts them all when there were more',
      }),
    ),
    details_total: Type.Optional(Type.Integer({ description: 'Number of problems found, present when details lists only the first 100' })),
  },
  { $id: 'Error' },
);

export const ErrorResponses = {
  '4xx': ErrorSchema,
  '5xx': ErrorSchema,
};

/**
 * For routes whose body the pipeline validates itself (to report every problem with its
 * batch index): the schema still documents the body in OpenAPI, Fastify does not check it.
 */
export const noValidation: FastifySchemaCompiler<unknown> = () => (value) => ({ value });

/** Items per page of a list. */
export const PageLimit = Type.Integer({ minimum: 1, maximum: 500, default: 50 });

export const PageQuery = {
  limit: Type.Optional(PageLimit),
  cursor: Type.Optional(Type.String({ maxLength: 64 })),
};

/**
 * An integer query parameter, checked against its schema's range once more before anything
 * uses it: the validator turns the text `1e400` into Infinity and then skips the range check of
 * a number that is not finite (strict numbers leave those to the type check, which the
 * conversion has already passed), so `min_risk=1e400` would otherwise reach the database.
 */
export function integerQuery(value: number | undefined, field: string, schema: TInteger): number | undefined {
  if (value === undefined) return undefined;
  if (Number.isSafeInteger(value) && value >= (schema.minimum ?? -Infinity) && value <= (schema.maximum ?? Infinity)) return value;
  const message = mismatchMessage(field, schema);
  throw new ApiError({ code: 'INVALID_REQUEST', message, details: [{ field, message }] });
}

/** A time a request names (a query filter, a dry-run range), read by util/time-text.ts: its Unix milliseconds, or a 400 naming the field. */
export function requestTime(reading: TimeReading, field: string): number {
  if (reading.ms !== undefined) return reading.ms;
  throw new ApiError({
    code: 'INVALID_REQUEST',
    message: `${field} must be an ISO 8601 date-time or Unix milliseconds`,
    details: [{ field, message: 'not a time' }],
  });
}

/** A time in a list's query. */
export const TimeQuery = Type.String({ maxLength: 40, description: 'ISO 8601 date-time or Unix milliseconds' });

/** A query time; a time no Date can hold is a 400 here rather than an error in the database. */
export const queryTime = (value: string | undefined, field: string): number | undefined =>
  value === undefined ? undefined : requestTime(readQueryTime(value), field);

/** A list's page size: the query's `limit`, 50 by default. */
export const pageLimit = (value: number | undefined): number => integerQuery(value, 'limit', PageLimit) ?? 50;

/** OpenAPI security requirement of key-authenticated routes. */
export const KeyAuth: { [scheme: string]: string[] }[] = [{ bearer: [] }, { apiKey: [] }];
