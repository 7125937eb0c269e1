import type { ClassifiedEvent, ValidatedEvent } from '../event/types.js';
import type { Catalog } from '../catalog/catalog.js';

export type ClassifyStage = (event: ValidatedEvent) => ClassifiedEvent;

/** Looks the type up in the catalog and applies the inferred-type rules. */
export function createClassifyStage(catalog: Catalog): ClassifyStage {
  return (event) => Object.assign(event, { classification: catalog.classify(event) });
}
