/**
 * The heap an account's compiled models may keep. Each model is checked on its own when it is
 * validated (LIMITS.modelMemoryBytes); this checks the account's enabled models together when
 * one is saved, so no account can make the service keep more than LIMITS.accountMemoryBytes of
 * compiled patterns, however its models are split.
 */
import type { ErrorDetail } from '../event/rejection.js';
import type { ThreatModelRow } from '../storage/types.js';
import { compileModel } from './compile.js';
import { LIMITS, type ThreatModelDefinition } from './model.js';
import { storedDefinition } from './stored.js';

/** Compiled sizes of saved versions: a version never changes, so its size is computed once. */
const sizes = new Map<string, number>();
const SIZES_KEPT = 10_000;

export function modelMemoryBytes(id: string, version: number, definition: ThreatModelDefinition): number {
  const key = `${id}|${version}`;
  let bytes = sizes.get(key);
  if (bytes === undefined) {
    bytes = compileModel(id, version, definition).memoryBytes;
    if (sizes.size >= SIZES_KEPT) sizes.clear();
    sizes.set(key, bytes);
  }
  return bytes;
}

/**
 * The refusal for saving `candidate` (as model `candidateId`, or a new model) next to the
 * account's other enabled models, or undefined when they fit together. The candidate's size
 * comes from its check; the saved models' sizes are computed once per version.
 */
export function accountMemoryProblem(
  rows: readonly ThreatModelRow[],
  candidate: { readonly definition: ThreatModelDefinition; readonly memoryBytes: number },
  candidateId?: string,
): ErrorDetail | undefined {
  if (!candidate.definition.enabled) return undefined;
  let total = candidate.memoryBytes;
  for (const row of rows) if (row.enabled && row.id !== candidateId) total += modelMemoryBytes(row.id, row.version, storedDefinition(row));
  if (total <= LIMITS.accountMemoryBytes) return undefined;
  return {
    field: '(account)',
    message: `the account's enabled threat models would compile to about ${Math.ceil(total / 1024 / 1024)} MiB, over the limit of ${LIMITS.accountMemoryBytes / 1024 / 1024} MiB per account: disable or simplify a model first`,
  };
}
