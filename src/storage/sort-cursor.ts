/**
 * The cursor of a sorted list: the last row's sort value and its id, so the next page starts
 * after that row whatever rows share its value. Clients treat it as opaque.
 */
export interface SortCursor {
  readonly value: number;
  readonly id: string;
}

const CURSOR = /^(-?\d{1,16})\.([A-Za-z0-9_]{1,40})$/;

export const writeSortCursor = (value: number, id: string): string => `${value}.${id}`;

/** The cursor's parts, or undefined when the text is no cursor of a sorted list. */
export function readSortCursor(text: string): SortCursor | undefined {
  const m = CURSOR.exec(text);
  return m ? { value: Number(m[1]), id: m[2] as string } : undefined;
}
