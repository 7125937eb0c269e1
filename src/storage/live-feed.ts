/**
 * The live feed: what a commit stored, told to the account's open live streams (GET /v1/stream).
 * The ingestion pipeline publishes a request's events and alert changes once their transaction
 * committed, so a stream shows only what is durably stored. Publishing never waits and never
 * fails ingestion: a feed that cannot deliver drops the message and counts it.
 *
 * Embedded, `LocalLiveFeed` delivers in process. Scaled out, the Redis feed (src/redis/live-feed.ts)
 * delivers to this instance's streams the same way and sends the message to the other instances
 * through Redis pub/sub, one channel per account.
 */
import { alertView } from './alert-view.js';
import { eventView } from './event-view.js';
import type { AlertStatus, AlertWrite, EventRow, NewEventRow } from './types.js';

/** An alert change as a stream shows it: the alert view, and whether this change opened it. */
export type LiveAlertView = Omit<ReturnType<typeof alertView>, 'status'> & {
  /** 'opened': the change opened the alert; 'sighted': a later event added to an alert opened earlier. */
  readonly change: 'opened' | 'sighted';
  /** The status an opened alert starts with; a sighting leaves the stored status (and assignee) as they are, so it has none. */
  readonly status?: AlertStatus;
};

/** One committed request's events and alert changes of one account, as the API shows them. */
export interface LiveMessage {
  readonly events: readonly Readonly<Record<string, unknown>>[];
  readonly alerts: readonly LiveAlertView[];
}

export type LiveListener = (message: LiveMessage) => void;

/** One open stream's place in the feed. */
export interface LiveSubscription {
  /** Gives the stream's slot back and stops its deliveries (idempotent). */
  close(): void;
}

export interface LiveFeed {
  /** Open streams an account may hold at once (on all instances). */
  readonly maxStreams: number;
  /** Whether a stream of the account may be open (here or, scaled out, on another instance): publishers skip the work otherwise. */
  listening(accountId: string): boolean;
  /** Delivers to the account's streams; never throws, never waits. */
  publish(accountId: string, message: LiveMessage): void;
  /** Takes one of the account's stream slots and subscribes `listener`; undefined when the account has `maxStreams` open. */
  open(accountId: string, listener: LiveListener): Promise<LiveSubscription | undefined>;
  /** Messages not delivered to another instance (Redis slow or away), since the feed started. */
  readonly undelivered: number;
  close(): Promise<void>;
}

/** The default bound of open streams per account. */
export const MAX_STREAMS_PER_ACCOUNT = 5;

/**
 * The committed rows of one request as messages, one per account (a request's events belong to
 * one account; a commit group's parts are published per request). An alert changed by several
 * events of the request is told once, as it was last written.
 */
export function liveMessages(
  events: readonly (EventRow | NewEventRow)[],
  alerts: readonly AlertWrite[],
  wanted: (accountId: string) => boolean,
): Map<string, LiveMessage> {
  const out = new Map<string, { events: Record<string, unknown>[]; alerts: Map<string, LiveAlertView> }>();
  const of = (accountId: string) => {
    let m = out.get(accountId);
    if (m === undefined) {
      m = { events: [], alerts: new Map() };
      out.set(accountId, m);
    }
    return m;
  };
  for (const row of events) {
    if (!wanted(row.accountId)) continue;
    const doc = 'docJson' in row ? (JSON.parse(row.docJson) as Record<string, unknown>) : row.doc;
    // The row's tags, which its search's tag: terms read, whatever the document says.
    of(row.accountId).events.push(eventView({ id: row.id, doc: { ...doc, tags: row.tags } }));
  }
  for (const write of alerts) {
    if (!wanted(write.alert.accountId)) continue;
    const m = of(write.alert.accountId);
    const opened = write.opened || m.alerts.get(write.alert.id)?.change === 'opened';
    const { status, ...view } = alertView(write.alert);
    m.alerts.set(write.alert.id, opened ? { ...view, status, change: 'opened' } : { ...view, change: 'sighted' });
  }
  const messages = new Map<string, LiveMessage>();
  for (const [accountId, m] of out) messages.set(accountId, { events: m.events, alerts: [...m.alerts.values()] });
  return messages;
}

/** Listeners by account, each account holding at most `max`. */
export class LiveListeners {
  private readonly byAccount = new Map<string, Set<LiveListener>>();

  constructor(readonly max: number) {}

  has(accountId: string): boolean {
    return this.byAccount.has(accountId);
  }

  count(accountId: string): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }

  accounts(): IterableIterator<string> {
    return this.byAccount.keys();
  }

  /** Adds the listener unless the account holds `max`; answers whether it was added. */
  add(accountId: string, listener: LiveListener): boolean {
    let set = this.byAccount.get(accountId);
    if (set === undefined) {
      set = new Set();
      this.byAccount.set(accountId, set);
    }
    if (set.size >= this.max) return false;
    set.add(listener);
    return true;
  }

  /** Removes the listener; answers whether it was the account's last. */
  remove(accountId: string, listener: LiveListener): boolean {
    const set = this.byAccount.get(accountId);
    if (set === undefined || !set.delete(listener)) return false;
    if (set.size > 0) return false;
    this.byAccount.delete(accountId);
    return true;
  }

  deliver(accountId: string, message: LiveMessage): void {
    const set = this.byAccount.get(accountId);
    if (set === undefined) return;
    // A stream's listener only queues; one that throws must not keep the message from the others.
    for (const listener of set)
      try {
        listener(message);
      } catch {
        // The stream ends itself on its own errors.
      }
  }

  clear(): void {
    this.byAccount.clear();
  }
}

/** The embedded live feed: this process's streams, at most `maxStreams` per account. */
export class LocalLiveFeed implements LiveFeed {
  private readonly listeners: LiveListeners;
  readonly undelivered = 0;

  constructor(readonly maxStreams: number = MAX_STREAMS_PER_ACCOUNT) {
    this.listeners = new LiveListeners(maxStreams);
  }

  listening(accountId: string): boolean {
    return this.listeners.has(accountId);
  }

  publish(accountId: string, message: LiveMessage): void {
    this.listeners.deliver(accountId, message);
  }

  async open(accountId: string, listener: LiveListener): Promise<LiveSubscription | undefined> {
    if (!this.listeners.add(accountId, listener)) return undefined;
    let open = true;
    return {
      close: () => {
        if (!open) return;
        open = false;
        this.listeners.remove(accountId, listener);
      },
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
