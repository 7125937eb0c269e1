import type { CommitBatch } from '../storage/types.js';
import type { CommitGroup } from './commit-group.js';

/**
 * Hands a request's rows to the commit group and resolves once their transaction committed:
 * the 202 is sent only after that. Rejects with StoreUnavailableError when it did not commit.
 */
export type StoreStage = (batch: CommitBatch) => Promise<void>;

export function createStoreStage(commits: CommitGroup): StoreStage {
  return (batch) => (batch.events.length > 0 || batch.usage.length > 0 ? commits.add(batch) : Promise.resolve());
}
