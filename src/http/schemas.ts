import { Type } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'Error code, e.g. INVALID_EVENT' }),
    message: Type.String(),
    request_id: Type.String(),
    retry_after: Type.Optional(Type.Integer({ description: 'Seconds, on 429' })),
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

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 64 })),
};

/** OpenAPI security requirement of key-authenticated routes. */
export const KeyAuth: { [scheme: string]: string[] }[] = [{ bearer: [] }, { apiKey: [] }];
