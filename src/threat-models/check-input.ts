/**
 * What checking threat-model input does, whatever thread runs it: YAML parsing, Sigma
 * translation, validation and compilation. check-thread.ts runs it for the API, bounded in time
 * and memory; bench/sigma-corpus.ts runs it in process on a directory of Sigma rules.
 */
import type { FieldMapping } from './field-mapping.js';
import { compileModel } from './compile.js';
import { parseModelInput, type ModelInputValue } from './input.js';
import { validateModel, type Validation } from './validate.js';

export type CheckRequest =
  | { readonly id: number; readonly kind: 'input'; readonly body: unknown; readonly fields: FieldMapping }
  | { readonly id: number; readonly kind: 'native'; readonly body: unknown };

/** A valid model and the heap its compiled form keeps (compiled here, so the request thread need not). */
export interface CheckedModel extends ModelInputValue {
  readonly memoryBytes: number;
}

function read(request: CheckRequest): Validation<ModelInputValue> {
  if (request.kind === 'input') return parseModelInput(request.body, request.fields);
  const checked = validateModel(request.body);
  return checked.ok ? { ok: true, value: { definition: checked.value, source: { format: 'native' } } } : checked;
}

/** The model a request body makes, or every reason it is refused. */
export function checkModelRequest(request: CheckRequest): Validation<CheckedModel> {
  const result = read(request);
  if (!result.ok) return result;
  const { definition, source } = result.value;
  return { ok: true, value: { definition, source, memoryBytes: compileModel('check', 0, definition).memoryBytes } };
}
