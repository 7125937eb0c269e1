import { sql, type RawBuilder } from 'kysely';
import { addressToBigInt, parseAddress, parseCidr, type Address } from '../../util/ip.js';
import type { FieldTest, QueryNode } from '../../util/search-query.js';
import { QUERY_LIMITS, textWords } from '../../util/search-query.js';
import type { WildcardPart } from '../../util/tenant-pattern.js';
import { PG_EVENT_TSVECTOR, pgWordsQuery } from '../search-text.js';

/**
 * Compiles a search query (util/search-query.ts) to one SQL condition on the events or alerts
 * table, for SQLite or PostgreSQL. Every value is a parameter; a wildcard becomes a GLOB
 * (SQLite) or LIKE (PostgreSQL) pattern whose literal characters are escaped, and both engines
 * match such patterns without backtracking into exponential time; free text goes to the
 * full-text index (an FTS5 table on SQLite, a GIN index over a tsvector on PostgreSQL).
 */

export type Dialect = 'sqlite' | 'postgres';
export type SearchTable = 'events' | 'alerts';

type Cond = RawBuilder<boolean>;

/** The SQL of a field's value, and for a field held in the event document, its path there. */
interface Column {
  readonly sql: RawBuilder<unknown>;
  /**
   * The value is one of the texts the full-text index holds, so a word test can narrow it
   * first: true, or the one dialect that has no better index for it.
   */
  readonly indexed?: boolean | Dialect;
}

const col = (name: string): RawBuilder<unknown> => sql.ref(name);

/** A member of the event document: json_extract on SQLite, #>> on PostgreSQL (text either way). */
function docMember(path: readonly string[], dialect: Dialect): RawBuilder<unknown> {
  if (dialect === 'postgres') return sql`((doc::jsonb) #>> ${`{${path.join(',')}}`})`;
  return sql`cast(json_extract(doc, ${'$' + path.map((p) => `."${p}"`).join('')}) as text)`;
}

const EVENT_COLUMNS: Readonly<Record<string, string>> = {
  id: 'id',
  type: 'type',
  event_id: 'event_id',
  actor_id: 'actor_id',
  ip: 'ip',
  risk: 'risk_score',
  occurred_at: 'occurred_at',
  received_at: 'received_at',
};

/** Columns the full-text index also holds, and where no other index serves them. */
const INDEXED_COLUMNS: Readonly<Record<string, boolean | Dialect>> = { actor_id: 'sqlite', ip: 'sqlite', event_id: true };

const EVENT_DOC_PATHS: Readonly<Record<string, readonly string[]>> = {
  email: ['email'],
  host: ['host'],
  session_id: ['session_id'],
  user_agent: ['user_agent'],
  device_id: ['metadata', 'device_id'],
  'request.method': ['request', 'method'],
  'request.path': ['request', 'path'],
  'request.query': ['request', 'query'],
  country: ['enrichment', 'geo', 'country'],
  asn: ['enrichment', 'asn', 'number'],
};

/** Document members the full-text index holds (see search-text.ts). */
const INDEXED_DOC_ROOTS = new Set(['email', 'host', 'session_id', 'user_agent', 'metadata', 'request']);

function eventColumn(field: string, dialect: Dialect): Column {
  const name = EVENT_COLUMNS[field];
  if (name !== undefined) return { sql: col(name), ...(Object.hasOwn(INDEXED_COLUMNS, field) ? { indexed: INDEXED_COLUMNS[field] } : {}) };
  const path = EVENT_DOC_PATHS[field] ?? (field.startsWith('metadata.') ? field.split('.') : undefined);
  if (path === undefined) throw new Error(`no column for event field ${field}`);
  const member = docMember(path, dialect);
  return { sql: field === 'asn' && dialect === 'postgres' ? sql`(${member})::bigint` : member, indexed: INDEXED_DOC_ROOTS.has(path[0] as string) };
}

const ALERT_COLUMNS = new Set(['id', 'type', 'status', 'subject', 'actor_id', 'assignee', 'count', 'first_seen', 'last_seen']);
const SEVERITY_RANK_SQL = sql`(case severity when 'low' then 1 when 'medium' then 2 when 'high' then 3 when 'critical' then 4 else 0 end)`;

function alertColumn(field: string): Column {
  if (field === 'severity') return { sql: SEVERITY_RANK_SQL };
  if (ALERT_COLUMNS.has(field)) return { sql: col(field) };
  throw new Error(`no column for alert field ${field}`);
}

/** A GLOB pattern (SQLite): `[*]`, `[?]` and `[[]` are those characters themselves. */
function globPattern(parts: readonly WildcardPart[]): string {
  let out = '';
  for (const p of parts) out += p.wildcard ?? p.text.replace(/[*?[]/g, (c) => `[${c}]`);
  return out;
}

/** A LIKE pattern (PostgreSQL, escape character `\`). */
function likePattern(parts: readonly WildcardPart[]): string {
  let out = '';
  for (const p of parts) out += p.wildcard === '*' ? '%' : p.wildcard === '?' ? '_' : p.text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return out;
}

function patternTest(value: RawBuilder<unknown>, parts: readonly WildcardPart[], dialect: Dialect): Cond {
  return dialect === 'sqlite' ? sql<boolean>`${value} glob ${globPattern(parts)}` : sql<boolean>`${value} like ${likePattern(parts)} escape '\\'`;
}

/** An address as fixed-width text that sorts as the address does: `4` and 8 hex digits, or `6` and 32. */
export function addressKey(a: Address): string {
  return a.version === 4 ? `4${a.w3.toString(16).padStart(8, '0')}` : `6${addressToBigInt(a).toString(16).padStart(32, '0')}`;
}

/** The SQLite function behind CIDR tests (registered on the reading connection): the address key of a stored address, or null. */
export const SQLITE_ADDRESS_KEY = 'vigil_address_key';
export function sqliteAddressKey(text: unknown): string | null {
  if (typeof text !== 'string') return null;
  const a = parseAddress(text);
  return a === undefined ? null : addressKey(a);
}

function cidrTest(value: RawBuilder<unknown>, block: string, dialect: Dialect): Cond {
  if (dialect === 'postgres') return sql<boolean>`(${value})::inet <<= ${block}::inet`;
  const cidr = parseCidr(block);
  if (cidr === undefined || cidr.bits === undefined) return sql<boolean>`0 = 1`;
  const key = (v: number | bigint) => (cidr.version === 4 ? `4${Number(v).toString(16).padStart(8, '0')}` : `6${BigInt(v).toString(16).padStart(32, '0')}`);
  const test = sql<boolean>`${sql.raw(SQLITE_ADDRESS_KEY)}(${value}) between ${key(cidr.first)} and ${key(cidr.last)}`;
  if (cidr.version !== 4 || cidr.bits < 8) return test;
  // Stored addresses are canonical dotted quads: the block's whole octets are a text prefix,
  // which GLOB tests in C; the address function then runs only on the rows that prefix leaves,
  // and not at all for a block of whole octets.
  const first = Number(cidr.first);
  const octets = [first >>> 24, (first >>> 16) & 255, (first >>> 8) & 255, first & 255].slice(0, Math.floor(cidr.bits / 8));
  const prefix = sql<boolean>`${value} glob ${`${octets.join('.')}${octets.length < 4 ? '.*' : ''}`}`;
  return cidr.bits % 8 === 0 ? prefix : sql<boolean>`(${prefix} and ${test})`;
}

function rangeTest(value: RawBuilder<unknown>, test: Extract<FieldTest, { op: 'range' }>): Cond {
  const parts: Cond[] = [];
  if (test.low) parts.push(test.low.inclusive ? sql<boolean>`${value} >= ${test.low.value}` : sql<boolean>`${value} > ${test.low.value}`);
  if (test.high) parts.push(test.high.inclusive ? sql<boolean>`${value} <= ${test.high.value}` : sql<boolean>`${value} < ${test.high.value}`);
  return parts.length === 0 ? sql<boolean>`${value} is not null` : sql<boolean>`(${sql.join(parts, sql` and `)})`;
}

function valueTest(column: Column, test: FieldTest, dialect: Dialect): Cond {
  switch (test.op) {
    case 'equals':
      return sql<boolean>`${column.sql} = ${test.value}`;
    case 'pattern':
      return patternTest(column.sql, test.parts, dialect);
    case 'range':
      return rangeTest(column.sql, test);
    case 'cidr':
      return cidrTest(column.sql, test.block, dialect);
  }
}

/** Rows whose JSON `tags` array holds a tag that passes the test. */
function tagTest(test: FieldTest, dialect: Dialect): Cond {
  if (test.op === 'equals') {
    return dialect === 'postgres'
      ? sql<boolean>`(tags::jsonb) @> ${JSON.stringify([String(test.value)])}::jsonb`
      : sql<boolean>`exists (select 1 from json_each(tags) where value = ${String(test.value)})`;
  }
  if (test.op !== 'pattern') return sql<boolean>`0 = 1`;
  return dialect === 'postgres'
    ? sql<boolean>`exists (select 1 from jsonb_array_elements_text(tags::jsonb) as t(v) where ${patternTest(sql.ref('t.v'), test.parts, dialect)})`
    : sql<boolean>`exists (select 1 from json_each(tags) where ${patternTest(sql.ref('value'), test.parts, dialect)})`;
}

/**
 * An FTS5 phrase of the text: the index's tokenizer splits it into words as it split the
 * documents; the last word a prefix when asked. A quote inside is doubled.
 */
const ftsPhrase = (text: string, prefix: boolean): string => `"${text.replace(/"/g, '""')}"${prefix ? ' *' : ''}`;

/** Events whose indexed text holds the words of `text` in this order. */
function eventWords(text: string, prefix: boolean, dialect: Dialect): Cond {
  if (dialect === 'postgres') return sql<boolean>`${sql.raw(PG_EVENT_TSVECTOR)} @@ ${pgWordsQuery(text, prefix)}`;
  return sql<boolean>`events.rowid in (select rowid from events_fts where events_fts match ${ftsPhrase(text, prefix)})`;
}

/** Alerts whose type, subject or actor holds these words in this order (alerts have no full-text index: they are few per event). */
function alertWords(words: readonly string[], dialect: Dialect): Cond {
  const text = sql`lower(type || ' ' || subject || ' ' || coalesce(actor_id, ''))`;
  const pattern = `%${words.join('%')}%`;
  return dialect === 'postgres' ? sql<boolean>`${text} like ${pattern}` : sql<boolean>`${text} like ${pattern} escape '\\'`;
}

/**
 * Words the index text of an event must hold, in this order, for a test of an indexed value
 * to pass: the literal start of an exact value or a pattern, whose last word may continue; or,
 * in a pattern that starts with a wildcard, the words of its first literal after the first one
 * (which may be the end of a longer word). Narrowing by the index first turns a scan of the
 * account's rows into a look-up.
 */
function indexWords(test: FieldTest): { text: string; prefix: boolean } | undefined {
  let lead: { text: string; prefix: boolean } | undefined;
  if (test.op === 'equals') lead = { text: String(test.value), prefix: false };
  else if (test.op === 'pattern') {
    const first = test.parts[0];
    if (first?.wildcard === null) lead = { text: first.text, prefix: true };
    else {
      const literal = test.parts.find((p) => p.wildcard === null && textWords(p.text).length >= 2);
      // The first word may be the end of a longer one: the index can only vouch for the rest.
      if (literal !== undefined) lead = { text: textWords(literal.text).slice(1).join(' '), prefix: true };
    }
  }
  if (lead === undefined) return undefined;
  const words = textWords(lead.text);
  return words.length === 0 || words.length > QUERY_LIMITS.words ? undefined : lead;
}

/** Characters of a trigram: a literal shorter than this gives the trigram index nothing to look up. */
const TRIGRAM = 3;

/**
 * The literals of a pattern that starts with a wildcard (`*smith*`), for the trigram index:
 * every value passing the pattern holds each of them, and so does the event's indexed text.
 * Undefined for other tests, and for a pattern whose literals are all shorter than a trigram.
 */
function trigramLiterals(test: FieldTest): string[] | undefined {
  if (test.op !== 'pattern' || test.parts[0]?.wildcard === null) return undefined;
  const literals = test.parts.filter((p) => p.wildcard === null && [...p.text].length >= TRIGRAM).map((p) => p.text);
  return literals.length === 0 ? undefined : literals;
}

/**
 * Events whose indexed text holds what a pattern that starts with a wildcard needs. SQLite: the
 * trigram table holds each literal as a phrase of trigrams (matched regardless of case, a
 * superset the pattern then narrows). PostgreSQL: the pattern itself, open at both ends, on
 * `search_text`, which the trigram index serves.
 */
function trigramTest(test: Extract<FieldTest, { op: 'pattern' }>, literals: readonly string[], dialect: Dialect): Cond {
  if (dialect === 'postgres') return sql<boolean>`search_text like ${`%${likePattern(test.parts)}%`} escape '\\'`;
  const match = literals.map((l) => `"${l.replace(/"/g, '""')}"`).join(' AND ');
  return sql<boolean>`events.rowid in (select rowid from events_trigram where events_trigram match ${match})`;
}

/** The value is one of the texts in the event's indexed text (search-text.ts). */
const inSearchText = (column: Column): boolean => column.indexed !== undefined;

function fieldCondition(node: Extract<QueryNode, { kind: 'field' }>, table: SearchTable, dialect: Dialect): Cond {
  if (table === 'events' && node.field === 'tag') return tagTest(node.test, dialect);
  const column = table === 'events' ? eventColumn(node.field, dialect) : alertColumn(node.field);
  const test = valueTest(column, node.test, dialect);
  const literals = table === 'events' && inSearchText(column) ? trigramLiterals(node.test) : undefined;
  if (literals !== undefined && node.test.op === 'pattern') return sql<boolean>`(${trigramTest(node.test, literals, dialect)} and ${test})`;
  const lead = column.indexed === true || (column.indexed === dialect && node.test.op !== 'cidr') ? indexWords(node.test) : undefined;
  return lead === undefined ? test : sql<boolean>`(${eventWords(lead.text, lead.prefix, dialect)} and ${test})`;
}

/**
 * SQLite: rowids (`rid`, of any account) that include every event of the account passing the query,
 * from the full-text index and the time-ordered index, when the query's structure allows one
 * (an AND needs one such part, an OR all of its parts; a negation gives none). A store reads a
 * small such set row by row instead of walking the account in its sort order, which for a
 * rare match walks the whole account.
 */
export function sqliteCandidates(node: QueryNode, accountId: string): RawBuilder<unknown> | undefined {
  switch (node.kind) {
    case 'text':
      return sql`select rowid as rid from events_fts where events_fts match ${ftsPhrase(node.text, node.prefix)}`;
    case 'field': {
      // Tags live in their own JSON column, which no index covers.
      if (node.field === 'tag') return undefined;
      const column = eventColumn(node.field, 'sqlite');
      const literals = inSearchText(column) ? trigramLiterals(node.test) : undefined;
      if (literals !== undefined) {
        const match = literals.map((l) => `"${l.replace(/"/g, '""')}"`).join(' AND ');
        return sql`select rowid as rid from events_trigram where events_trigram match ${match}`;
      }
      const lead = column.indexed === true || column.indexed === 'sqlite' ? indexWords(node.test) : undefined;
      if (lead !== undefined) return sql`select rowid as rid from events_fts where events_fts match ${ftsPhrase(lead.text, lead.prefix)}`;
      // SQLite keeps no actor or address index on events (see event-hours.ts): a pattern on
      // either reads the (account_id, received_at, actor_id, ip) index, which holds both.
      if ((node.field === 'actor_id' || node.field === 'ip') && node.test.op !== 'equals') {
        const test = valueTest({ sql: sql.ref(`scan.${node.field}`) }, node.test, 'sqlite');
        return sql`select rowid as rid from events as scan indexed by events_account_received where scan.account_id = ${accountId} and ${sql.raw(`scan.${node.field}`)} is not null and ${test}`;
      }
      return undefined;
    }
    case 'and': {
      for (const item of node.items) {
        const found = sqliteCandidates(item, accountId);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    case 'or': {
      const parts: RawBuilder<unknown>[] = [];
      for (const item of node.items) {
        const found = sqliteCandidates(item, accountId);
        if (found === undefined) return undefined;
        parts.push(found);
      }
      return sql.join(parts, sql` union `);
    }
    case 'not':
      return undefined;
  }
}

/**
 * PostgreSQL: a condition that every event of the query passes and that the full-text or trigram
 * index answers, when the query's structure allows one (as sqliteCandidates); `trigrams`: the
 * trigram index exists. The store counts the rows it names up to a bound, through the index,
 * before choosing how to read: the planner cannot, its estimate for a prefix or a pattern
 * being far off.
 */
export function pgCandidates(node: QueryNode, trigrams: boolean): Cond | undefined {
  switch (node.kind) {
    case 'text':
      return eventWords(node.text, node.prefix, 'postgres');
    case 'field': {
      if (node.field === 'tag') return undefined;
      const column = eventColumn(node.field, 'postgres');
      const literals = trigrams && inSearchText(column) ? trigramLiterals(node.test) : undefined;
      if (literals !== undefined && node.test.op === 'pattern') return trigramTest(node.test, literals, 'postgres');
      const lead = column.indexed === true || column.indexed === 'postgres' ? indexWords(node.test) : undefined;
      return lead === undefined ? undefined : eventWords(lead.text, lead.prefix, 'postgres');
    }
    case 'and': {
      for (const item of node.items) {
        const found = pgCandidates(item, trigrams);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    case 'or': {
      const parts: Cond[] = [];
      for (const item of node.items) {
        const found = pgCandidates(item, trigrams);
        if (found === undefined) return undefined;
        parts.push(found);
      }
      return sql<boolean>`(${sql.join(parts, sql` or `)})`;
    }
    case 'not':
      return undefined;
  }
}

/** The query as one condition on the table's unqualified columns (events also as `events.`) for rows of the account. */
export function searchCondition(node: QueryNode, table: SearchTable, dialect: Dialect, accountId: string): Cond {
  switch (node.kind) {
    case 'and':
      return sql<boolean>`(${sql.join(
        node.items.map((n) => searchCondition(n, table, dialect, accountId)),
        sql` and `,
      )})`;
    case 'or':
      return sql<boolean>`(${sql.join(
        node.items.map((n) => searchCondition(n, table, dialect, accountId)),
        sql` or `,
      )})`;
    case 'not':
      // A missing value (null) fails a test, and NOT of it passes: "not this actor" includes events without one.
      return sql<boolean>`not coalesce(${searchCondition(node.item, table, dialect, accountId)}, ${dialect === 'postgres' ? sql`false` : sql`0`})`;
    case 'text':
      return table === 'events' ? eventWords(node.text, node.prefix, dialect) : alertWords(node.words, dialect);
    case 'field':
      return fieldCondition(node, table, dialect);
  }
}
