import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { KyselyAccess } from './kysely/access.js';
import { KyselyEventStore } from './kysely/events.js';
import { dropMonthPartitionsBefore } from './postgres-partitions.js';

/** Events on PostgreSQL: month partitions for retention, a GIN index for the tag filter. */
export class PostgresEventStore extends KyselyEventStore {
  constructor(
    x: KyselyAccess,
    /** The schema the tables live in. */
    private readonly schema: () => Promise<string>,
  ) {
    super(x);
  }

  override async dropEventsBefore(before: number): Promise<{ readonly partitionsDropped: number; readonly rowsDeleted: number }> {
    const schema = await this.schema();
    return this.x.guard('dropEventsBefore', () => dropMonthPartitionsBefore(this.x.db as unknown as Kysely<unknown>, schema, before));
  }

  /** Served by the GIN index on `tags::jsonb`. */
  protected override hasTag(tag: string): RawBuilder<boolean> {
    return sql<boolean>`(tags::jsonb) @> ${JSON.stringify([tag])}::jsonb`;
  }
}
