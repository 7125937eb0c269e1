import type { ClassifiedEvent, ValidatedEvent } from '../event/types.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Classified, Reserved } from './request.js';
import type { Stage } from './stage.js';

/** One event's classification. */
export type ClassifyStage = (event: ValidatedEvent) => ClassifiedEvent;

/** Looks the type up in the catalog and applies the inferred-type rules. */
export function createClassifyStage(catalog: Catalog): ClassifyStage {
  return (event) => Object.assign(event, { classification: catalog.classify(event) });
}

/** Classifies the admitted events: base score, inferred types, and which detectors may fire. */
export function classifyStage(classify: ClassifyStage): Stage<Reserved, Classified> {
  return (request) => {
    const { events, admitted } = request;
    const classified: ClassifiedEvent[] = [];
    for (let n = 0; n < admitted.length; n++) classified.push(classify(events[admitted[n] as number] as ValidatedEvent));
    return Object.assign(request, { classified });
  };
}
