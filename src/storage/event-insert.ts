import { CompiledQuery } from 'kysely';
import { docTextOf, type CommitBatch } from './types.js';

/**
 * The PostgreSQL group commit's one big statement, written by hand: Kysely's builder spends more
 * time building a many-row VALUES list than the database spends inserting it. (SQLite inserts
 * with a statement prepared once on its writer connection, sqlite-writes.ts.)
 */

const COLUMNS = 'id, account_id, type, event_id, occurred_at, received_at, actor_id, ip, risk_score, tags, doc';
const WIDTH = 11;

/**
 * PostgreSQL: one array per column, unnested into rows. Eleven parameters whatever the group
 * size, so one statement (no parameter limit, one parse) writes the whole group.
 */
const UNNEST_SQL =
  `insert into events (${COLUMNS}) select * from unnest(` +
  '$1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::int8[], $7::text[], $8::text[], $9::int4[], $10::text[], $11::text[])';

export function unnestInsert(events: CommitBatch['events']): CompiledQuery {
  const n = events.length;
  const cols = Array.from({ length: WIDTH }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const e = events[i] as CommitBatch['events'][number];
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
    (cols[10] as unknown[])[i] = docTextOf(e);
  }
  return CompiledQuery.raw(UNNEST_SQL, cols);
}
