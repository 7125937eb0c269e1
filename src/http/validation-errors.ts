import type { FastifySchemaValidationError } from 'fastify';
import type { ErrorDetail } from '../event/rejection.js';
import { fieldOfPointer, mismatchMessage, requiredMessage, unknownMemberMessage } from '../util/schema-text.js';

const isSchema = (value: unknown): value is Readonly<Record<string, unknown>> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Ajv's errors for a request, one per field: Ajv reports a union of constants once per branch
 * and then once for the union; the error of the outermost schema (the union) is the one kept,
 * worded from that schema (Ajv runs with `verbose`, so each error carries it).
 */
export function validationDetails(errors: readonly FastifySchemaValidationError[]): ErrorDetail[] {
  const byField = new Map<string, { readonly depth: number; readonly message: string }>();
  for (const error of errors) {
    const parent = 'parentSchema' in error && isSchema(error.parentSchema) ? error.parentSchema : undefined;
    let field: string;
    let message: string;
    if (error.keyword === 'required') {
      field = fieldOfPointer(error.instancePath, String(error.params.missingProperty));
      message = requiredMessage(field);
    } else if (error.keyword === 'additionalProperties') {
      field = fieldOfPointer(error.instancePath, String(error.params.additionalProperty));
      message = unknownMemberMessage(field, parent);
    } else {
      field = fieldOfPointer(error.instancePath);
      message = parent ? mismatchMessage(field, parent) : `${field} ${error.message ?? 'is invalid'}`;
    }
    const depth = error.schemaPath.split('/').length;
    const kept = byField.get(field);
    if (kept === undefined || depth < kept.depth) byField.set(field, { depth, message });
  }
  return [...byField].map(([field, { message }]) => ({ field, message }));
}
