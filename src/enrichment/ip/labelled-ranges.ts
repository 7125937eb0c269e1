import type { Cidr } from './address.js';
import { IntervalTable, IntervalTableBuilder } from './interval-table.js';

export interface LabelledCidr {
  readonly cidr: Cidr;
  /** Small integer naming the list the range came from. */
  readonly label: number;
}

export interface LabelledTable {
  readonly table: IntervalTable;
  /** The table's values index this: the sorted labels that list the range. */
  readonly labelSets: readonly (readonly number[])[];
}

interface Boundary<T> {
  readonly at: T;
  readonly label: number;
  readonly delta: 1 | -1;
}

/**
 * Builds one table from ranges that may overlap, within a list and across lists: the address
 * space is cut where the set of lists changes, and each piece points at that set.
 */
export function buildLabelledTable(ranges: readonly LabelledCidr[]): LabelledTable {
  const builder = new IntervalTableBuilder();
  const labelSets: number[][] = [];
  const setIds = new Map<string, number>();
  const setId = (active: ReadonlyMap<number, number>): number => {
    const labels = [...active.keys()].sort((a, b) => a - b);
    const key = labels.join(',');
    let id = setIds.get(key);
    if (id === undefined) {
      id = labelSets.length;
      labelSets.push(labels);
      setIds.set(key, id);
    }
    return id;
  };
  const v4 = ranges.filter((r) => r.cidr.version === 4);
  const v6 = ranges.filter((r) => r.cidr.version === 6);
  sweep(v4.map((r) => ({ first: r.cidr.first as number, last: r.cidr.last as number, label: r.label })), 1, setId, (f, l, v) => builder.addV4(f, l, v));
  sweep(v6.map((r) => ({ first: r.cidr.first as bigint, last: r.cidr.last as bigint, label: r.label })), 1n, setId, (f, l, v) => builder.addV6(f, l, v));
  return { table: builder.build(), labelSets };
}

function sweep<T extends number | bigint>(
  ranges: readonly { first: T; last: T; label: number }[],
  one: T,
  setId: (active: ReadonlyMap<number, number>) => number,
  emit: (first: T, last: T, value: number) => void,
): void {
  if (ranges.length === 0) return;
  const boundaries: Boundary<T>[] = [];
  for (const r of ranges) {
    boundaries.push({ at: r.first, label: r.label, delta: 1 });
    boundaries.push({ at: ((r.last as bigint) + (one as bigint)) as T, label: r.label, delta: -1 });
  }
  boundaries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const active = new Map<number, number>();
  let open: { first: T; value: number } | undefined;
  let i = 0;
  while (i < boundaries.length) {
    const at = (boundaries[i] as Boundary<T>).at;
    for (; i < boundaries.length && (boundaries[i] as Boundary<T>).at === at; i++) {
      const b = boundaries[i] as Boundary<T>;
      const count = (active.get(b.label) ?? 0) + b.delta;
      if (count === 0) active.delete(b.label);
      else active.set(b.label, count);
    }
    const value = active.size === 0 ? -1 : setId(active);
    if (open && open.value === value) continue;
    if (open) emit(open.first, ((at as bigint) - (one as bigint)) as T, open.value);
    open = value < 0 ? undefined : { first: at, value };
  }
}
