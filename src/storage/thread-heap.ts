import { setFlagsFromString } from 'node:v8';
import type { ResourceLimits } from 'node:worker_threads';

let semiSpaceFlagsCleared = false;

/**
 * The resource limits that give a thread a young generation of `youngGenerationMb` (V8 sizes it
 * as three semi-spaces).
 *
 * V8 applies a semi-space size given to `node` (`--max-semi-space-size`, `--min-semi-space-size`,
 * as `npm start` gives the request thread) to every heap it configures, over a worker's
 * `resourceLimits`: without the first call's clearing of those flags each thread would reserve
 * the request thread's young generation. The request thread's heap, configured at start-up, keeps
 * the size it was given.
 */
export function youngGenerationLimits(youngGenerationMb: number): ResourceLimits {
  if (!semiSpaceFlagsCleared) {
    semiSpaceFlagsCleared = true;
    setFlagsFromString('--max-semi-space-size=0');
    setFlagsFromString('--min-semi-space-size=0');
  }
  return { maxYoungGenerationSizeMb: youngGenerationMb };
}
