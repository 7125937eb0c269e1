/**
 * Live tail: the account's new events and alerts as GET /v1/stream sends them (server-sent
 * events, authenticated by the session cookie that EventSource sends).
 *
 * The stream's messages:
 *   event: ready    data {"kinds": ["events", "alerts"]}   once, when the stream is subscribed
 *   event: event    data <EventDoc, as GET /v1/events answers an event>
 *   event: alert    data <LiveAlert: the alert as GET /v1/alerts answers it, without assignee, with
 *                   `change`: 'opened' | 'sighted'; a sighting (a later event added to an alert
 *                   opened earlier) has no status: the stored one is unchanged>
 *   event: dropped  data {"dropped": n, "total": n}        n messages were not sent since the last
 *                                                            such notice (the reader was too slow); total since the stream opened
 *   ": keep-alive" comments every 15 s (EventSource ignores them)
 * An account has at most 5 streams open; a sixth is refused (429), and the hook tries again later.
 */
import { useEffect, useState } from 'preact/hooks';
import { query as queryString, type Alert, type AlertStatus, type EventDoc } from './api';

export type LiveKind = 'events' | 'alerts';

/** An alert change as the stream sends it. */
export type LiveAlert = Omit<Alert, 'status' | 'assignee'> & { readonly change: 'opened' | 'sighted'; readonly status?: AlertStatus };

export type LiveItem = { readonly kind: 'event'; readonly event: EventDoc } | { readonly kind: 'alert'; readonly alert: LiveAlert };

export interface LiveTail {
  /** Newest first, at most `max` (200 by default). */
  readonly items: readonly LiveItem[];
  /** Messages the service did not send because this page read too slowly (announced by `event: dropped`). */
  readonly dropped: number;
  /** The stream is open and subscribed. */
  readonly connected: boolean;
}

export interface LiveOptions {
  /** Items kept, newest first. */
  readonly max?: number;
  /** Only events and alerts of this type: the exact name or a prefix ending in `.*` (the stream's `type` filter). */
  readonly type?: string;
  /** Only events scored at least this (the stream's `min_risk` filter). */
  readonly minRisk?: number;
}

/** The stream's URL for these kinds, query and filters. */
export function streamUrl(kinds: readonly LiveKind[], query: string, options: LiveOptions = {}): string {
  return `/v1/stream${queryString({ kinds: kinds.join(','), q: query.trim(), type: options.type, min_risk: options.minRisk })}`;
}

const FIRST_RETRY_MS = 2_000;
const LAST_RETRY_MS = 30_000;

/**
 * The account's new events and alerts while the view is shown and not paused. Pausing closes the
 * stream (its slot is given back to the account) and keeps the items; resuming opens a new one
 * (what arrived meanwhile is not replayed: the list reloads it). A stream that fails or is refused
 * is opened again after 2 s, doubling up to 30 s; unmounting closes it.
 */
export function useLiveTail(kinds: readonly LiveKind[], query: string, paused: boolean, options: LiveOptions = {}): LiveTail {
  const max = options.max ?? 200;
  const url = streamUrl(kinds, query, options);
  const [items, setItems] = useState<readonly LiveItem[]>([]);
  const [dropped, setDropped] = useState(0);
  const [connected, setConnected] = useState(false);

  // Another query or kind is another list.
  useEffect(() => {
    setItems([]);
    setDropped(0);
  }, [url]);

  useEffect(() => {
    if (paused || kinds.length === 0) {
      setConnected(false);
      return undefined;
    }
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let delay = FIRST_RETRY_MS;
    let closed = false;
    const add = (item: LiveItem) => setItems((list) => [item, ...list].slice(0, max));
    const open = () => {
      if (closed) return;
      const es = new EventSource(url, { withCredentials: true });
      source = es;
      es.addEventListener('ready', () => {
        delay = FIRST_RETRY_MS;
        setConnected(true);
      });
      es.addEventListener('event', (m) => add({ kind: 'event', event: JSON.parse((m as MessageEvent<string>).data) as EventDoc }));
      es.addEventListener('alert', (m) => add({ kind: 'alert', alert: JSON.parse((m as MessageEvent<string>).data) as LiveAlert }));
      es.addEventListener('dropped', (m) => {
        const n = (JSON.parse((m as MessageEvent<string>).data) as { dropped: number }).dropped;
        setDropped((d) => d + n);
      });
      es.onerror = () => {
        setConnected(false);
        // EventSource retries a dropped connection itself, but not a refused one (429, 401): that one is retried here.
        if (es.readyState !== EventSource.CLOSED || closed) return;
        es.close();
        retry = setTimeout(open, delay);
        delay = Math.min(LAST_RETRY_MS, delay * 2);
      };
    };
    open();
    return () => {
      closed = true;
      clearTimeout(retry);
      source?.close();
      setConnected(false);
    };
    // `kinds` is read through `url`.
  }, [url, paused, max]);

  return { items, dropped, connected };
}
