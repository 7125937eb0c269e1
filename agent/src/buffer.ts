import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AgentEvent } from './event.js';
import { redactEvent, type RedactConfig } from './redact.js';

/** The buffer holds command lines and user names: only the agent's own user may read it. */
const BUFFER_MODE = 0o600;

/**
 * Creates the database file owner-only before SQLite opens it (SQLite gives its -wal and -shm
 * files the database file's mode), and narrows the files a release before this one left 0644.
 */
function ownerOnly(path: string): void {
  closeSync(openSync(path, 'a', BUFFER_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, BUFFER_MODE);
}

export interface PendingEvent {
  readonly seq: number;
  readonly eventId: string;
  readonly body: string;
}

/** Counters kept with the buffer so `vigil-agent status` and the heartbeat read the same figures. */
export interface BufferStats {
  readonly depth: number;
  readonly oldestPendingAt: number | null;
  readonly sent: number;
  readonly droppedByService: number;
  readonly rejected: number;
  readonly skippedWhileFull: number;
  readonly lastSendAt: number | null;
  readonly lastError: string | null;
  readonly lastErrorAt: number | null;
  readonly maxEvents: number;
}

/**
 * The local SQLite buffer: every event is written here before any send, together with the
 * source position that produced it in one transaction, so after a crash a line is either
 * buffered and its position saved, or neither. Rows leave only when the service
 * acknowledged them (or rejected them as invalid, into the `rejected` table).
 */
export class EventBuffer {
  private readonly db: Database.Database;
  private readonly insertEvent: Database.Statement;
  private readonly putState: Database.Statement;
  private readonly getStateStmt: Database.Statement;
  private readonly deleteSeq: Database.Statement;
  private readonly selectPending: Database.Statement;
  private readonly countStmt: Database.Statement;
  private listeners: (() => void)[] = [];
  private cachedDepth: number;

  constructor(
    path: string,
    readonly maxEvents: number,
    readonly: boolean = false,
    /** Scrubbing applied to every event before it is written (none when omitted). */
    private readonly redact?: RedactConfig,
  ) {
    if (!readonly && path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
      ownerOnly(path);
    }
    this.db = new Database(path, { readonly, fileMustExist: readonly });
    if (!readonly) {
      this.db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode survives a process crash (SIGKILL); only a power cut may lose the last commits.
      this.db.pragma('synchronous = NORMAL');
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS rejected (event_id TEXT PRIMARY KEY, body TEXT NOT NULL, reason TEXT NOT NULL, rejected_at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      `);
    }
    this.insertEvent = this.db.prepare('INSERT OR IGNORE INTO events (event_id, type, body, created_at) VALUES (?, ?, ?, ?)');
    this.putState = this.db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    this.getStateStmt = this.db.prepare('SELECT value FROM state WHERE key = ?');
    this.deleteSeq = this.db.prepare('DELETE FROM events WHERE seq = ?');
    this.selectPending = this.db.prepare('SELECT seq, event_id AS eventId, body FROM events ORDER BY seq LIMIT ?');
    this.countStmt = this.db.prepare('SELECT count(*) AS n FROM events');
    this.cachedDepth = (this.countStmt.get() as { n: number }).n;
  }

  /** True once the buffer holds max_events: tailing sources pause (their position stays) until it drains. */
  get full(): boolean {
    return this.cachedDepth >= this.maxEvents;
  }

  get depth(): number {
    return this.cachedDepth;
  }

  /** Buffers events and saves source positions atomically; duplicates of a buffered event_id are ignored. */
  append(events: readonly AgentEvent[], states: Readonly<Record<string, unknown>> = {}): void {
    if (events.length === 0 && Object.keys(states).length === 0) return;
    const now = Date.now();
    let added = 0;
    this.db.transaction(() => {
      for (const event of events) {
        const e = this.redact === undefined ? event : redactEvent(event, this.redact);
        added += this.insertEvent.run(e.event_id, e.event, JSON.stringify(e), now).changes;
      }
      for (const [k, v] of Object.entries(states)) this.putState.run(k, JSON.stringify(v));
    })();
    this.cachedDepth += added;
    if (added > 0) for (const l of this.listeners) l();
  }

  /** A fresher heartbeat supersedes an unsent one, so heartbeats hold at most one row even while the buffer is full. */
  replaceHeartbeat(event: AgentEvent): void {
    this.db.transaction(() => {
      const removed = this.db.prepare("DELETE FROM events WHERE type = 'server.agent.heartbeat'").run().changes;
      this.cachedDepth -= removed;
      this.cachedDepth += this.insertEvent.run(event.event_id, event.event, JSON.stringify(event), Date.now()).changes;
    })();
    for (const l of this.listeners) l();
  }

  getState<T>(key: string): T | undefined {
    const row = this.getStateStmt.get(key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  setState(key: string, value: unknown): void {
    this.putState.run(key, JSON.stringify(value));
  }

  private bump(key: string, by: number): void {
    if (by === 0) return;
    this.putState.run(key, JSON.stringify((this.getState<number>(key) ?? 0) + by));
  }

  pending(limit: number): PendingEvent[] {
    return this.selectPending.all(limit) as PendingEvent[];
  }

  /** The service acknowledged these rows (accepted, or dropped by a Free plan's monthly cap). */
  acknowledge(seqs: readonly number[], droppedByService: number): void {
    this.db.transaction(() => {
      for (const s of seqs) this.cachedDepth -= this.deleteSeq.run(s).changes;
      this.bump('stat.sent', seqs.length - droppedByService);
      this.bump('stat.dropped_by_service', droppedByService);
      this.putState.run('stat.last_send_at', JSON.stringify(Date.now()));
    })();
  }

  /** The service will never accept this row (invalid event): kept aside, with the reason, for inspection. */
  reject(row: PendingEvent, reason: string): void {
    this.db.transaction(() => {
      this.db
        .prepare('INSERT OR REPLACE INTO rejected (event_id, body, reason, rejected_at) VALUES (?, ?, ?, ?)')
        .run(row.eventId, row.body, reason, Date.now());
      this.cachedDepth -= this.deleteSeq.run(row.seq).changes;
      this.bump('stat.rejected', 1);
    })();
  }

  noteSkippedWhileFull(n: number): void {
    this.bump('stat.skipped_while_full', n);
  }

  noteError(message: string | null): void {
    this.putState.run('stat.last_error', JSON.stringify(message));
    if (message !== null) this.putState.run('stat.last_error_at', JSON.stringify(Date.now()));
  }

  stats(): BufferStats {
    const depth = (this.countStmt.get() as { n: number }).n;
    const oldest = this.db.prepare('SELECT min(created_at) AS at FROM events').get() as { at: number | null };
    return {
      depth,
      oldestPendingAt: oldest.at,
      sent: this.getState<number>('stat.sent') ?? 0,
      droppedByService: this.getState<number>('stat.dropped_by_service') ?? 0,
      rejected: this.getState<number>('stat.rejected') ?? 0,
      skippedWhileFull: this.getState<number>('stat.skipped_while_full') ?? 0,
      lastSendAt: this.getState<number>('stat.last_send_at') ?? null,
      lastError: this.getState<string | null>('stat.last_error') ?? null,
      lastErrorAt: this.getState<number>('stat.last_error_at') ?? null,
      maxEvents: this.maxEvents,
    };
  }

  /** Called after events were added (the sender wakes up instead of waiting for its poll). */
  onAppend(listener: () => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    this.listeners = [];
    this.db.close();
  }
}
