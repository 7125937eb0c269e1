/**
 * Dry runs over a day or more: POST /v1/threat-models/test answers one page of evaluation at a
 * time, and the client sends each answer's `next_cursor` back (with the same model and range)
 * until it is null. Windows, thresholds and sequences continue across pages: the service keeps a
 * run's evaluation state between its pages for 10 minutes.
 */
import { ApiFailure, call, type DryRun } from './api';

/** The model a dry run evaluates: one to try, or a saved one. */
export type DryRunSubject = { readonly model: unknown } | { readonly id: string };

/** One page of a dry run. Its counts and lists are this page's; `progress` counts the whole run so far. */
export interface DryRunPage extends DryRun {
  /** Why the page ended before the range did, in words; null on the last page. */
  readonly truncated_reason: string | null;
  /** Send it back for the next page; null when every event of the range has been evaluated. */
  readonly next_cursor: string | null;
  readonly progress: {
    /** Events evaluated by this page and the ones before it. */
    readonly evaluated: number;
    /** Events of the range, counted when the run started (an estimate: events stored since with a time still ahead of the run are evaluated too). */
    readonly total: number;
    /** Matched events and alerts raised by this page and the ones before it. */
    readonly matched: number;
    readonly alerts_raised: number;
  };
}

/** The one request a page is. */
export const dryRunPage = (subject: DryRunSubject, range: { readonly from: string; readonly to: string }, cursor?: string) =>
  call<DryRunPage>('POST', '/v1/threat-models/test', { ...subject, ...range, ...(cursor === undefined ? {} : { cursor }) });

/** What a whole dry run found: the totals, and the first matched events and alerts of all its pages. */
export interface DryRunSummary {
  readonly pages: number;
  readonly evaluated: number;
  readonly total: number;
  readonly matched: number;
  readonly alerts_raised: number;
  /** The run stopped before the range's end: `stop` was called. */
  readonly stopped: boolean;
  readonly events: DryRun['events'];
  readonly alerts: DryRun['alerts'];
}

const LISTED = 100;
const BUSY_WAIT_MS = 1_000;
const BUSY_TRIES = 30;

/** An alert that goes on across pages is listed by each of them: the later listing (its count and last sighting so far) replaces the earlier. */
function mergeAlerts(before: DryRun['alerts'], page: DryRun['alerts']): DryRun['alerts'] {
  const key = (a: DryRun['alerts'][number]) => `${a.type}\u0000${a.subject}\u0000${a.first_seen}`;
  const merged = new Map(before.map((a) => [key(a), a]));
  for (const a of page) if (merged.has(key(a)) || merged.size < LISTED) merged.set(key(a), a);
  return [...merged.values()];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Walks a whole range page by page; `onPage` sees each page and the summary so far (for a progress
 * bar: `page.progress.evaluated / page.progress.total`). `shouldStop` is asked between pages. A
 * page refused because another dry run of the account is running (DRY_RUN_BUSY) is asked again.
 */
export async function dryRunAll(
  subject: DryRunSubject,
  range: { readonly from: string; readonly to: string },
  onPage: (page: DryRunPage, summary: DryRunSummary) => void = () => {},
  shouldStop: () => boolean = () => false,
): Promise<DryRunSummary> {
  let summary: DryRunSummary = { pages: 0, evaluated: 0, total: 0, matched: 0, alerts_raised: 0, stopped: false, events: [], alerts: [] };
  let cursor: string | undefined;
  for (;;) {
    if (shouldStop()) return { ...summary, stopped: true };
    let page: DryRunPage | undefined;
    for (let tries = 0; page === undefined; tries++) {
      try {
        page = await dryRunPage(subject, range, cursor);
      } catch (err) {
        if (!(err instanceof ApiFailure && err.code === 'DRY_RUN_BUSY') || tries >= BUSY_TRIES) throw err;
        await pause(BUSY_WAIT_MS);
      }
    }
    summary = {
      pages: summary.pages + 1,
      evaluated: page.progress.evaluated,
      total: Math.max(page.progress.total, page.progress.evaluated),
      matched: page.progress.matched,
      alerts_raised: page.progress.alerts_raised,
      stopped: false,
      events: [...summary.events, ...page.events].slice(0, LISTED),
      alerts: mergeAlerts(summary.alerts, page.alerts),
    };
    onPage(page, summary);
    if (page.next_cursor === null) return summary;
    cursor = page.next_cursor;
  }
}
