import type { Cidr } from '../../util/ip.js';
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

/**
 * Builds one table from ranges that may overlap, within a list and across lists: the address
 * space is cut where the set of lists changes, and each piece points at that set.
 */
export function buildLabelledTable(ranges: readonly LabelledCidr[]): LabelledTable {
  const builder = new IntervalTableBuilder();
  const labelSets: number[][] = [];
  const setIds = new Map<string, number>();
  const setId = (active: ReadonlyMap<number, number>): number => {
    // Most pieces are listed by one list: its key needs no sort or join.
    const labels = active.size === 1 ? [active.keys().next().value as number] : [...active.keys()].sort((a, b) => a - b);
    const key = labels.length === 1 ? String(labels[0]) : labels.join(',');
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
  sweep(v4Boundaries(v4), 1, setId, (f, l, v) => builder.addV4(f, l, v));
  sweep(v6Boundaries(v6), 1n, setId, (f, l, v) => builder.addV6(f, l, v));
  return { table: builder.build(), labelSets };
}

/** Boundaries sorted by address: where a list's range opens (delta 1) or has just closed (-1). */
interface Boundaries<T> {
  readonly length: number;
  at(i: number): T;
  label(i: number): number;
  delta(i: number): 1 | -1;
}

/**
 * IPv4 boundaries packed as numbers (address * 2^21 + label * 2 + opening) in a Float64Array,
 * which sorts natively: no object per boundary, no comparator. A 50,000-entry blocklist loads
 * several times faster than with an array of objects. Exact: 2^32 * 2^21 = 2^53.
 */
const LABEL_BITS = 2 ** 21;
function v4Boundaries(ranges: readonly LabelledCidr[]): Boundaries<number> {
  const packed = new Float64Array(ranges.length * 2);
  ranges.forEach((r, i) => {
    if (r.label >= LABEL_BITS / 2) throw new RangeError('too many lists');
    packed[2 * i] = (r.cidr.first as number) * LABEL_BITS + r.label * 2 + 1;
    packed[2 * i + 1] = ((r.cidr.last as number) + 1) * LABEL_BITS + r.label * 2;
  });
  packed.sort();
  const rest = (i: number) => (packed[i] as number) % LABEL_BITS;
  return {
    length: packed.length,
    at: (i) => Math.floor((packed[i] as number) / LABEL_BITS),
    label: (i) => rest(i) >>> 1,
    delta: (i) => (rest(i) & 1 ? 1 : -1),
  };
}

function v6Boundaries(ranges: readonly LabelledCidr[]): Boundaries<bigint> {
  const list: { at: bigint; label: number; delta: 1 | -1 }[] = [];
  for (const r of ranges) {
    list.push({ at: r.cidr.first as bigint, label: r.label, delta: 1 });
    list.push({ at: (r.cidr.last as bigint) + 1n, label: r.label, delta: -1 });
  }
  list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return { length: list.length, at: (i) => list[i]!.at, label: (i) => list[i]!.label, delta: (i) => list[i]!.delta };
}

/** Walks the boundaries, emitting each piece of the address space where the set of lists is constant. */
function sweep<T extends number | bigint>(
  boundaries: Boundaries<T>,
  one: T,
  setId: (active: ReadonlyMap<number, number>) => number,
  emit: (first: T, last: T, value: number) => void,
): void {
  const active = new Map<number, number>();
  let open: { first: T; value: number } | undefined;
  let i = 0;
  while (i < boundaries.length) {
    const at = boundaries.at(i);
    for (; i < boundaries.length && boundaries.at(i) === at; i++) {
      const label = boundaries.label(i);
      const count = (active.get(label) ?? 0) + boundaries.delta(i);
      if (count === 0) active.delete(label);
      else active.set(label, count);
    }
    const value = active.size === 0 ? -1 : setId(active);
    if (open && open.value === value) continue;
    if (open) emit(open.first, ((at as bigint) - (one as bigint)) as T, open.value);
    open = value < 0 ? undefined : { first: at, value };
  }
}
