import { sql, type RawBuilder } from 'kysely';

/**
 * What the full-text index of events holds: the text members of the event as it was sent that
 * an investigator searches for (type, ids, addresses, user agent, host, session, request, every
 * text in metadata), not what Vigil added (enrichment, classification, score), which would
 * multiply the index and its cost on every write. The index splits the text into words of
 * letters and digits: `dana.smith@example.com` holds dana, smith, example and com.
 *
 * The expressions here are the index's definition: the migration creates the index from them
 * and the queries (kysely/search-sql.ts) repeat them, which on PostgreSQL is how the planner
 * knows that the index answers the query.
 */

/** Top-level members of the stored document whose text is indexed (request and metadata with everything in them). */
export const INDEXED_MEMBERS = ['event', 'event_id', 'actor_id', 'email', 'ip', 'user_agent', 'session_id', 'host', 'request', 'metadata'] as const;

const JSONPATH = `strict $.keyvalue() ? (${INDEXED_MEMBERS.map((m) => `@.key == "${m}"`).join(' || ')}).value.** ? (@.type() == "string")`;

/** Text as the PostgreSQL index splits it: every run of other characters becomes a blank, so the parser sees plain words. */
const PG_NON_WORD = '[^[:alnum:]]+';
const pgWords = (text: string): string => `regexp_replace(${text}, '${PG_NON_WORD}', ' ', 'g')`;

/** The indexed texts of a stored document (PostgreSQL), as a jsonb array: for rows written before the `search_text` column. */
export const pgDocumentTexts = (doc: string): string => `jsonb_path_query_array(${doc}::jsonb, '${JSONPATH}'::jsonpath)`;

/**
 * The indexed tsvector of an event row (PostgreSQL): the words of its `search_text` column,
 * which the writer fills with eventSearchText (pgSearchText), so the index parses no document.
 */
export const PG_EVENT_TSVECTOR = `to_tsvector('simple'::regconfig, ${pgWords('search_text')})`;

/** The tsvector of the first search index (migration 009), which parsed the document: kept so that migration stays what it was. */
export const PG_DOCUMENT_TSVECTOR = `to_tsvector('simple'::regconfig, ${pgWords(`${pgDocumentTexts('doc')}::text`)})`;

/**
 * A tsquery matching the words of a text (a parameter) in that order, the last a prefix when
 * asked; null (nothing matches) when the text holds no word.
 */
export function pgWordsQuery(text: string, prefix: boolean): RawBuilder<unknown> {
  const words = sql`phraseto_tsquery('simple'::regconfig, regexp_replace(${text}, ${sql.raw(`'${PG_NON_WORD}'`)}, ' ', 'g'))`;
  return prefix ? sql`cast(nullif(${words}::text, '') || ':*' as tsquery)` : words;
}

/** Texts gathered from one event at most: metadata is the client's, and its size is bounded only by the body's. */
const MAX_TEXTS = 256;

function gatherTexts(value: unknown, out: string[], depth: number): void {
  if (out.length >= MAX_TEXTS) return;
  if (typeof value === 'string') out.push(value);
  else if (depth < 8 && value !== null && typeof value === 'object') {
    if (Array.isArray(value)) for (const v of value) gatherTexts(v, out, depth + 1);
    else for (const key in value) gatherTexts((value as Record<string, unknown>)[key], out, depth + 1);
  }
}

/**
 * The indexed text of an event (SQLite), from its document's members (or an object holding
 * them under the same names): made by the caller that builds the row, so the writer only
 * inserts it. The migration indexes stored events with sqliteEventText, which reads the same members.
 */
export function eventSearchText(doc: Readonly<Record<string, unknown>>): string {
  const out: string[] = [];
  for (const member of INDEXED_MEMBERS) gatherTexts(doc[member], out, 0);
  return out.join(' ');
}

/** The indexed text of an event row (SQLite) whose document is `doc` (an SQL expression), for rows stored before the index. */
export const sqliteEventText = (doc: string): string =>
  `(select group_concat(value, ' ') from json_tree(${doc}) where type = 'text' and ((path = '$' and key in (${INDEXED_MEMBERS.filter(
    (m) => m !== 'request' && m !== 'metadata',
  )
    .map((m) => `'${m}'`)
    .join(', ')})) or fullkey glob '$.request.*' or fullkey glob '$.metadata.*'))`;

/** The `search_text` of a PostgreSQL event row: eventSearchText without NUL, which a PostgreSQL text cannot hold. */
export const pgSearchText = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', ' ') : text);
