import { CompiledQuery } from 'kysely';
import type { EventRow } from './types.js';

/**
 * The group commit's one big statement, written by hand: Kysely's builder spends more time
 * building a 500-row VALUES list than the database spends inserting it, and the SQL text
 * only depends on the row count, so it is built once per count and cached.
 */

const COLUMNS = 'id, account_id, type, event_id, occurred_at, received_at, actor_id, ip, risk_score, tags, doc';
const WIDTH = 11;

/** Rows per VALUES statement on SQLite: 500 x 11 parameters stays far under its limit. */
export const VALUES_CHUNK = 500;

const valuesSql = new Map<number, string>();

/** SQLite: `insert ... values (?, ...), ...` for `rows` events. */
function valuesInsertSql(rows: number): string {
  let text = valuesSql.get(rows);
  if (text === undefined) {
    const tuple = `(${new Array(WIDTH).fill('?').join(', ')})`;
    text = `insert into events (${COLUMNS}) values ${new Array(rows).fill(tuple).join(', ')}`;
    valuesSql.set(rows, text);
  }
  return text;
}

export function valuesInsert(events: readonly EventRow[]): CompiledQuery {
  const params: unknown[] = new Array(events.length * WIDTH);
  let k = 0;
  for (const e of events) {
    params[k++] = e.id;
    params[k++] = e.accountId;
    params[k++] = e.type;
    params[k++] = e.eventId;
    params[k++] = e.occurredAt;
    params[k++] = e.receivedAt;
    params[k++] = e.actorId;
    params[k++] = e.ip;
    params[k++] = e.riskScore;
    params[k++] = JSON.stringify(e.tags);
    params[k++] = e.docJson ?? JSON.stringify(e.doc);
  }
  return CompiledQuery.raw(valuesInsertSql(events.length), params);
}

/**
 * PostgreSQL: one array per column, unnested into rows. Eleven parameters whatever the group
 * size, so one statement (no parameter limit, one parse) writes the whole group.
 */
const UNNEST_SQL =
  `insert into events (${COLUMNS}) select * from unnest(` +
  '$1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::int8[], $7::text[], $8::text[], $9::int4[], $10::text[], $11::text[])';

export function unnestInsert(events: readonly EventRow[]): CompiledQuery {
  const n = events.length;
  const cols = Array.from({ length: WIDTH }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const e = events[i] as EventRow;
    (cols[0] as unknown[])[i] = e.id;
    (cols[1] as unknown[])[i] = e.accountId;
    (cols[2] as unknown[])[i] = e.type;
    (cols[3] as unknown[])[i] = e.eventId;
    (cols[4] as unknown[])[i] = e.occurredAt;
    (cols[5] as unknown[])[i] = e.receivedAt;
    (cols[6] as unknown[])[i] = e.actorId;
    (cols[7] as unknown[])[i] = e.ip;
    (cols[8] as unknown[])[i] = e.riskScore;
    (cols[9] as unknown[])[i] = JSON.stringify(e.tags);
    (cols[10] as unknown[])[i] = e.docJson ?? JSON.stringify(e.doc);
  }
  return CompiledQuery.raw(UNNEST_SQL, cols);
}
