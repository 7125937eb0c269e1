import { sql, type Kysely } from 'kysely';

/**
 * Month partitions of the PostgreSQL events table (range on received_at, UTC months).
 * Every operation here runs in one transaction under an advisory lock, so any number of
 * instances may call it at once, and with a lock timeout, so upkeep that cannot get its
 * lock gives up (and runs again next time) instead of stalling ingestion behind it.
 */

export interface MonthPartition {
  /** `events_pYYYYMM` */
  readonly name: string;
  /** Inclusive lower bound, ms since the epoch (first instant of the month, UTC). */
  readonly from: number;
  /** Exclusive upper bound: the first instant of the next month. */
  readonly to: number;
}

const NAME = /^events_p(\d{4})(\d{2})$/;
const LOCK_TIMEOUT = '5s';

export function monthPartition(year: number, monthIndex: number): MonthPartition {
  const from = Date.UTC(year, monthIndex, 1);
  const start = new Date(from);
  const label = `${start.getUTCFullYear()}${String(start.getUTCMonth() + 1).padStart(2, '0')}`;
  return { name: `events_p${label}`, from, to: Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1) };
}

/** The partition holding `ms` and the `ahead` months after it. */
export function partitionsFor(ms: number, ahead: number): MonthPartition[] {
  const at = new Date(ms);
  const out: MonthPartition[] = [];
  for (let i = 0; i <= ahead; i++) out.push(monthPartition(at.getUTCFullYear(), at.getUTCMonth() + i));
  return out;
}

export function parsePartitionName(name: string): MonthPartition | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const month = Number(m[2]);
  if (month < 1 || month > 12) return undefined;
  return monthPartition(Number(m[1]), month - 1);
}

const table = (schema: string, name: string) => sql.id(schema, name);

/** Serialises partition upkeep per schema across every instance, for this transaction. */
async function lockUpkeep(trx: Kysely<unknown>, schema: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`vigil.events_partitions.${schema}`}))`.execute(trx);
  await sql.raw(`set local lock_timeout = '${LOCK_TIMEOUT}'`).execute(trx);
}

/** The month partitions that exist, oldest first (the default partition is not listed). */
export async function listMonthPartitions(db: Kysely<unknown>, schema: string): Promise<MonthPartition[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    join pg_class p on p.oid = i.inhparent
    join pg_namespace n on n.oid = p.relnamespace
    where p.relname = 'events' and n.nspname = ${schema}`.execute(db);
  return rows
    .map((r) => parsePartitionName(r.name))
    .filter((p): p is MonthPartition => p !== undefined)
    .sort((a, b) => a.from - b.from);
}

/**
 * Creates the missing partitions among `wanted`. Rows already in the default partition for
 * such a month (written before the partition existed) move into the new partition in the
 * same transaction; PostgreSQL refuses to create the partition otherwise.
 */
export async function ensureMonthPartitions(db: Kysely<unknown>, schema: string, wanted: readonly MonthPartition[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await lockUpkeep(trx, schema);
    const existing = new Set((await listMonthPartitions(trx, schema)).map((p) => p.name));
    const created: string[] = [];
    for (const part of wanted) {
      if (existing.has(part.name)) continue;
      const target = table(schema, part.name);
      const stray = await sql`select 1 from ${table(schema, 'events_default')} where received_at >= ${part.from} and received_at < ${part.to} limit 1`.execute(
        trx,
      );
      if (stray.rows.length === 0) {
        await sql`create table ${target} partition of ${table(schema, 'events')} for values from (${sql.lit(part.from)}) to (${sql.lit(part.to)})`.execute(trx);
      } else {
        await sql`create table ${target} (like ${table(schema, 'events')} including defaults including constraints)`.execute(trx);
        await sql`with moved as (delete from ${table(schema, 'events_default')} where received_at >= ${part.from} and received_at < ${part.to} returning *) insert into ${target} select * from moved`.execute(
          trx,
        );
        await sql`alter table ${table(schema, 'events')} attach partition ${target} for values from (${sql.lit(part.from)}) to (${sql.lit(part.to)})`.execute(
          trx,
        );
      }
      created.push(part.name);
    }
    return created;
  });
}

/**
 * Retention for every account at once: drops the month partitions that end at or before
 * `before`, then deletes the older rows left in the partition straddling it and in the default
 * partition (partition pruning keeps that delete to those two).
 */
export async function dropMonthPartitionsBefore(
  db: Kysely<unknown>,
  schema: string,
  before: number,
): Promise<{ partitionsDropped: number; rowsDeleted: number }> {
  return db.transaction().execute(async (trx) => {
    await lockUpkeep(trx, schema);
    let partitionsDropped = 0;
    for (const part of await listMonthPartitions(trx, schema)) {
      if (part.to > before) continue;
      await sql`drop table ${table(schema, part.name)}`.execute(trx);
      partitionsDropped++;
    }
    const result = await sql`delete from ${table(schema, 'events')} where received_at < ${before}`.execute(trx);
    return { partitionsDropped, rowsDeleted: Number(result.numAffectedRows ?? 0n) };
  });
}
