/**
 * The thread that reads and checks threat-model input: YAML parsing, Sigma translation,
 * validation and compilation (check-input.ts). All of it is tenant text whose cost grows with
 * what the tenant wrote, so none of it runs on the request thread (checker.ts runs this thread
 * and bounds it).
 */
import { parentPort } from 'node:worker_threads';
import { checkModelRequest, type CheckedModel, type CheckRequest } from './check-input.js';
import type { Validation } from './validate.js';

export type { CheckedModel, CheckRequest } from './check-input.js';

/** `ready` once the thread has loaded its modules (the time bound covers checks, not start-up). */
export type CheckReply = { readonly kind: 'ready' } | { readonly kind: 'checked'; readonly id: number; readonly result: Validation<CheckedModel> };

parentPort?.on('message', (request: CheckRequest) => {
  const reply: CheckReply = { kind: 'checked', id: request.id, result: checkModelRequest(request) };
  parentPort?.postMessage(reply);
});
parentPort?.postMessage({ kind: 'ready' } satisfies CheckReply);
