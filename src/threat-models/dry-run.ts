/**
 * Dry run: a model (saved or not) over the account's stored events of a time range, on a private
 * in-memory state store, so nothing is written: no alert row, no window state, no score.
 * Bounded by rows read and by wall time; the answer says when a bound cut it short.
 */
import { MemoryStateStore } from '../detection/state/memory-state-store.js';
import type { Store } from '../storage/store.js';
import type { EventRow } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { stepMatches, type CompiledModel } from './compile.js';
import { evaluateModels } from './evaluate.js';
import { EventView } from './event-view.js';

export interface DryRunLimits {
  readonly maxRows: number;
  readonly maxMs: number;
  /** Matched events and alerts listed in the answer (the counts cover all). */
  readonly listed: number;
}

export const DRY_RUN_LIMITS: DryRunLimits = { maxRows: 10_000, maxMs: 2_000, listed: 100 };
const PAGE = 500;

export interface DryRunResult {
  readonly scanned: number;
  readonly matched: number;
  readonly alerts_raised: number;
  /** null when every event of the range was read; otherwise the bound that stopped the scan. */
  readonly truncated: 'rows' | 'time' | null;
  readonly events: readonly { id: string; event: string; timestamp: string; actor_id: string | null; ip: string | null }[];
  readonly alerts: readonly {
    type: string;
    severity: string;
    subject: string;
    count: number;
    first_seen: string;
    last_seen: string;
    event_ids: readonly string[];
  }[];
}

async function readRange(
  store: Store,
  accountId: string,
  from: number,
  to: number,
  limits: DryRunLimits,
): Promise<{ rows: EventRow[]; truncated: DryRunResult['truncated'] }> {
  const started = performance.now();
  const rows: EventRow[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await store.listEvents(accountId, { since: from, until: to }, Math.min(PAGE, limits.maxRows - rows.length), cursor);
    rows.push(...page.items);
    if (page.nextCursor === null) return { rows, truncated: null };
    if (rows.length >= limits.maxRows) return { rows, truncated: 'rows' };
    if (performance.now() - started > limits.maxMs) return { rows, truncated: 'time' };
    cursor = page.nextCursor;
  }
}

export async function dryRun(
  store: Store,
  clock: Clock,
  accountId: string,
  model: CompiledModel,
  range: { from: number; to: number },
  limits: DryRunLimits = DRY_RUN_LIMITS,
): Promise<DryRunResult> {
  const { rows, truncated } = await readRange(store, accountId, range.from, range.to, limits);
  // Windows and sequences run in event time, oldest first.
  rows.sort((a, b) => a.occurredAt - b.occurredAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const inputs = rows.map((r) => ({ view: EventView.ofDoc(r.type, r.occurredAt, r.doc), eventId: r.id }));
  const matchedRows = rows.filter((_, i) => model.steps.some((s) => stepMatches(s, (inputs[i] as (typeof inputs)[number]).view)));
  const state = new MemoryStateStore({ clock, sweepIntervalMs: 0 });
  try {
    const detections = await evaluateModels(state, clock, accountId, [model], inputs);
    const alerts = new Map<string, DryRunResult['alerts'][number]>();
    for (const d of detections)
      for (const w of d.writes)
        alerts.set(w.alert.id, {
          type: w.alert.type,
          severity: w.alert.severity,
          subject: w.alert.subject,
          count: w.alert.count,
          first_seen: new Date(w.alert.firstSeen).toISOString(),
          last_seen: new Date(w.alert.lastSeen).toISOString(),
          event_ids: w.alert.eventIds,
        });
    return {
      scanned: rows.length,
      matched: matchedRows.length,
      alerts_raised: alerts.size,
      truncated,
      events: matchedRows.slice(0, limits.listed).map((r) => ({
        id: r.id,
        event: r.type,
        timestamp: new Date(r.occurredAt).toISOString(),
        actor_id: r.actorId,
        ip: r.ip,
      })),
      alerts: [...alerts.values()].slice(0, limits.listed),
    };
  } finally {
    await state.close();
  }
}
