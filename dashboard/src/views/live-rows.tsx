import { useMemo, useState } from 'preact/hooks';
import { fmtNumber } from '../ui';

export interface LiveRows<T> {
  /** The rows to show: live rows newest first, then the rest of the page. */
  readonly shown: readonly T[];
  /** Ids of the rows that arrived live (highlighted). */
  readonly fresh: ReadonlySet<string>;
  /** Rows that arrived while paused and are not shown yet. */
  readonly waiting: number;
  readonly paused: boolean;
  pause(): void;
  resume(): void;
}

/**
 * The live rows above a list's page. Pausing freezes what is shown (reading a row does not move
 * under the pointer) and counts what waits; resuming shows it.
 */
export function useLiveRows<T extends { readonly id: string }>(live: readonly T[], page: readonly T[]): LiveRows<T> {
  const [frozenTop, setFrozenTop] = useState<string | null | undefined>(undefined);
  const paused = frozenTop !== undefined;
  return useMemo(() => {
    let from = 0;
    if (paused) {
      // Nothing live when paused, or the paused-at row trimmed away: everything live is waiting.
      const at = frozenTop === null ? -1 : live.findIndex((r) => r.id === frozenTop);
      from = at === -1 ? live.length : at;
    }
    // The newest sighting of a row wins over older ones and over the page's copy (an alert seen again moves up with its new count).
    const seen = new Set<string>();
    const liveShown = live.slice(from).filter((r) => !seen.has(r.id) && (seen.add(r.id), true));
    return {
      shown: [...liveShown, ...page.filter((r) => !seen.has(r.id))],
      fresh: new Set(liveShown.map((r) => r.id)),
      waiting: from,
      paused,
      pause: () => setFrozenTop(live[0]?.id ?? null),
      resume: () => setFrozenTop(undefined),
    };
  }, [live, page, frozenTop]);
}

/** The Live switch of a list, its pause, and what waits while paused. */
export function LiveToggle<T>({
  live,
  setLive,
  available,
  connected,
  rows,
  dropped,
  what,
}: {
  live: boolean;
  setLive: (on: boolean) => void;
  available: boolean;
  connected: boolean;
  rows: LiveRows<T>;
  dropped: number;
  what: string;
}) {
  const on = live && available;
  return (
    <span class="live">
      <button type="button" class="secondary" aria-pressed={on} disabled={!available} onClick={() => (setLive(!live), rows.resume())}>
        Live
      </button>
      {on && (
        <button type="button" class="secondary" onClick={rows.paused ? rows.resume : rows.pause}>
          {rows.paused ? 'Resume' : 'Pause'}
        </button>
      )}
      <span role="status" class="small muted" data-testid="live-status">
        {!available
          ? 'Live shows the newest first page only.'
          : !on
            ? ''
            : rows.paused
              ? `Paused: ${fmtNumber(rows.waiting)} new ${what} waiting.`
              : connected
                ? `Live: new ${what} appear at the top.`
                : 'Connecting…'}
        {on && dropped > 0 && ` ${fmtNumber(dropped)} not delivered (the page read too slowly).`}
      </span>
    </span>
  );
}
