/**
 * Export of a data subject: every stored event, alert and note of the account that mentions
 * one of the identifiers (or their pseudonyms), page by page, so memory holds one page whatever
 * the subject's history.
 */
import type { Store } from '../storage/store.js';
import type { AlertNote, AlertRow, ErasableTable, EventRow } from '../storage/types.js';
import type { SubjectMatcher } from './subject.js';

/** Rows read from the store at a time. */
const EXPORT_PAGE = 500;

export type SubjectRecords =
  | { readonly type: 'event'; readonly rows: readonly EventRow[] }
  | { readonly type: 'alert'; readonly rows: readonly AlertRow[] }
  | { readonly type: 'note'; readonly rows: readonly AlertNote[] };

/** The keys of the account's rows of `table` that mention the subject, a page at a time. */
async function* mentioningKeys(store: Store, table: ErasableTable, accountId: string, matcher: SubjectMatcher): AsyncGenerator<string[]> {
  let after: string | undefined;
  for (;;) {
    const rows = await store.subjects.findMentions(table, accountId, matcher.searchTexts, after, EXPORT_PAGE);
    const keys = rows.filter((row) => Object.values(row.columns).some((text) => text !== null && matcher.columnMentions(text))).map((row) => row.key);
    if (keys.length > 0) yield keys;
    if (rows.length < EXPORT_PAGE) return;
    after = (rows[rows.length - 1] as { key: string }).key;
  }
}

/** The subject's events, then alerts, then notes, one page of records at a time. */
export async function* subjectRecords(store: Store, accountId: string, matcher: SubjectMatcher): AsyncGenerator<SubjectRecords> {
  for await (const ids of mentioningKeys(store, 'events', accountId, matcher)) {
    const rows = (await Promise.all(ids.map((id) => store.events.getEvent(accountId, id)))).filter((r): r is EventRow => r !== undefined);
    yield { type: 'event', rows };
  }
  for await (const ids of mentioningKeys(store, 'alerts', accountId, matcher)) {
    const rows = (await Promise.all(ids.map((id) => store.alerts.getAlert(accountId, id)))).filter((r): r is AlertRow => r !== undefined);
    yield { type: 'alert', rows };
  }
  for await (const ids of mentioningKeys(store, 'alert_notes', accountId, matcher))
    yield { type: 'note', rows: await store.subjects.notesByIds(accountId, ids) };
}
