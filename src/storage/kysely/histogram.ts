import { sql, type RawBuilder } from 'kysely';
import { num } from './access.js';

/** The bucket number of a time column: (column - from) / bucketMs, an integer on both databases. */
export function bucketOf(kind: 'sqlite' | 'postgres', column: 'occurred_at' | 'first_seen', from: number, bucketMs: number): RawBuilder<unknown> {
  const ref = sql.ref(column);
  return kind === 'postgres' ? sql`((${ref} - ${from}::bigint) / ${bucketMs}::bigint)` : sql`cast((${ref} - ${from}) / ${bucketMs} as integer)`;
}

/** `buckets` counts from the rows a `group by` of bucketOf answered; buckets no row fell in count 0. */
export function bucketCounts(rows: readonly { b: number | string; n: number | string }[], buckets: number): number[] {
  const counts = new Array<number>(buckets).fill(0);
  for (const row of rows) {
    const b = num(row.b);
    if (b >= 0 && b < buckets) counts[b] = num(row.n);
  }
  return counts;
}
