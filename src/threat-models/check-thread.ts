/**
 * The thread that reads and checks threat-model input: YAML parsing, Sigma translation,
 * validation and compilation. All of it is tenant text whose cost grows with what the tenant
 * wrote, so none of it runs on the request thread (checker.ts runs this thread and bounds it).
 */
import { parentPort } from 'node:worker_threads';
import type { FieldMapping } from './field-mapping.js';
import { compileModel } from './compile.js';
import { parseModelInput, type ModelInputValue } from './input.js';
import { validateModel, type Validation } from './validate.js';

export type CheckRequest =
  | { readonly id: number; readonly kind: 'input'; readonly body: unknown; readonly fields: FieldMapping }
  | { readonly id: number; readonly kind: 'native'; readonly body: unknown };

/** `ready` once the thread has loaded its modules (the time bound covers checks, not start-up). */
export type CheckReply = { readonly kind: 'ready' } | { readonly kind: 'checked'; readonly id: number; readonly result: Validation<CheckedModel> };

/** A valid model and the heap its compiled form keeps (compiled here, so the request thread need not). */
export interface CheckedModel extends ModelInputValue {
  readonly memoryBytes: number;
}

function read(request: CheckRequest): Validation<ModelInputValue> {
  if (request.kind === 'input') return parseModelInput(request.body, request.fields);
  const checked = validateModel(request.body);
  return checked.ok ? { ok: true, value: { definition: checked.value, source: { format: 'native' } } } : checked;
}

function check(request: CheckRequest): Validation<CheckedModel> {
  const result = read(request);
  if (!result.ok) return result;
  const { definition, source } = result.value;
  return { ok: true, value: { definition, source, memoryBytes: compileModel('check', 0, definition).memoryBytes } };
}

parentPort?.on('message', (request: CheckRequest) => {
  const reply: CheckReply = { kind: 'checked', id: request.id, result: check(request) };
  parentPort?.postMessage(reply);
});
parentPort?.postMessage({ kind: 'ready' } satisfies CheckReply);
