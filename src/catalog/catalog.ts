import type { ValidatedEvent } from '../pipeline/types.js';
import type { CatalogInput, Classification } from './types.js';

/** PLACEHOLDER until issue 4 lands: the catalog built once at start-up. */
export interface Catalog {
  classify(event: ValidatedEvent): Classification;
  /** The document served by GET /v1/catalog. */
  describe(): Record<string, unknown>;
}

export function buildCatalog(input: CatalogInput): Catalog {
  void input;
  return {
    classify: () => ({ predefined: false, baseScore: 0, inferred: [], families: new Set(), detectors: [] }),
    describe: () => ({}),
  };
}
