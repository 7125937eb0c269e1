import type {
  AuditEntry,
  AuditFilter,
  MemberRecord,
  MemberSession,
  MemberToken,
  SsoConfig,
  UserRecord,
  AlertFilter,
  AlertNote,
  AlertRow,
  AlertStatus,
  ApiKeyRecord,
  CommitBatch,
  ErasableTable,
  ErasedRows,
  MentionRow,
  SubjectJobProgress,
  SubjectJobRow,
  SuppressionRow,
  DashboardSession,
  EntityActivity,
  EntityAlerts,
  EntityRef,
  EntityWindow,
  EventFilter,
  EventRow,
  IdempotencyRow,
  Overview,
  Page,
  ThreatModelRow,
  ThreatModelVersionRow,
  UsageRow,
} from './types.js';
import type { Account, KeyKind, KeyScope, Role } from '../event/account.js';
import type { WebhookStore } from './webhooks/store.js';

/** A key as stored: only its hash and display prefix, never the key itself. */
export interface NewKey {
  readonly id: string;
  readonly accountId: string;
  readonly kind: KeyKind;
  readonly hash: string;
  readonly prefix: string;
  readonly allowedOrigins: readonly string[];
  readonly createdAt: number;
  /** Omitted: the kind's full set (as for keys made before scopes existed). */
  readonly scopes?: readonly KeyScope[];
  readonly name?: string | null;
}

export interface CommitOptions {
  /** Write this group in a transaction of its own, never together with other queued commits. */
  readonly alone?: boolean;
}

/*
 * Durable records, one interface per aggregate. One implementation per database (SQLite,
 * PostgreSQL) composed of one Kysely class per aggregate (src/storage/kysely/), and one contract
 * suite per aggregate (test/contract/store/) that both pass.
 * Methods throw on infrastructure failure (StoreUnavailableError) and when the database refuses
 * a write for its content, e.g. a duplicate id or key hash (StoreRejectedError); "not found" is
 * undefined, and a lookup by a value no row can hold (such as U+0000 on PostgreSQL) is not found.
 */

/** Accounts and their API keys. */
export interface AccountStore {
  createAccount(input: { id: string; name: string; plan: string; createdAt: number }): Promise<Account>;
  /**
   * Creates the account only when the database holds none, atomically across every instance on
   * the database; undefined when an account exists (another instance created the first one).
   */
  createFirstAccount(input: { id: string; name: string; plan: string; createdAt: number }): Promise<Account | undefined>;
  getAccount(id: string): Promise<Account | undefined>;
  listAccounts(): Promise<readonly Account[]>;
  countAccounts(): Promise<number>;
  updateAccount(id: string, patch: { plan?: string; name?: string; settings?: Record<string, unknown> }): Promise<Account | undefined>;

  createKey(input: NewKey): Promise<ApiKeyRecord>;
  /** The key with this hash and its account, revoked or not (the caller decides). */
  findKeyByHash(hash: string): Promise<{ key: ApiKeyRecord; hash: string; account: Account } | undefined>;
  listKeys(accountId?: string): Promise<readonly ApiKeyRecord[]>;
  /** The key with this id, revoked or not; undefined when no such key exists. */
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** Returns false when no such key exists. */
  revokeKey(id: string, at: number): Promise<boolean>;
  /** Replaces the key's allowed browser origins; undefined when no such key exists. */
  setKeyOrigins(id: string, allowedOrigins: readonly string[]): Promise<ApiKeyRecord | undefined>;
  /** Changes a key's scopes and/or name; undefined when no such key exists. */
  updateKey(id: string, patch: { readonly scopes?: readonly KeyScope[]; readonly name?: string | null }): Promise<ApiKeyRecord | undefined>;
}

/** Stored events and the idempotency rows of their event ids (written by Store.commit). */
export interface EventStore {
  getEvent(accountId: string, id: string): Promise<EventRow | undefined>;
  listEvents(accountId: string, filter: EventFilter, limit: number, cursor?: string): Promise<Page<EventRow>>;
  /** How many of the account's events that pass the filter occurred in each of `buckets` spans of `bucketMs` from `from`. */
  eventHistogram(accountId: string, filter: EventFilter, from: number, bucketMs: number, buckets: number): Promise<number[]>;
  countEvents(accountId: string): Promise<number>;
  /** The account's events whose event time is in [since, until), counted up to `max`. */
  countEventsBetween(accountId: string, since: number, until: number, max: number): Promise<number>;
  /**
   * The idempotency rows of these event ids created at `since` or later, by event id: a request
   * asks once for all of its event ids (one query, one round trip on a database server).
   */
  findIdempotency(accountId: string, eventIds: readonly string[], since: number): Promise<ReadonlyMap<string, IdempotencyRow>>;

  /** Retention: deletes events and idempotency rows older than the cut-off; returns rows deleted. */
  pruneEvents(accountId: string, before: number): Promise<number>;
  pruneIdempotency(before: number): Promise<number>;

  /**
   * Retention across every account: removes all events received before the cut-off (run it
   * with the longest retention any plan has, before the per-account `pruneEvents`). PostgreSQL
   * drops whole month partitions that end at or before the cut-off (no row-by-row delete) and
   * deletes the few older rows left in the partition that straddles it; SQLite deletes rows.
   */
  dropEventsBefore(before: number): Promise<{ readonly partitionsDropped: number; readonly rowsDeleted: number }>;
}

/** Alerts (opened and updated by Store.commit) and their analysts' notes. */
export interface AlertStore {
  getAlert(accountId: string, id: string): Promise<AlertRow | undefined>;
  listAlerts(accountId: string, filter: AlertFilter, limit: number, cursor?: string): Promise<Page<AlertRow>>;
  /** Alerts passing the filter per bucket of first sighting: `buckets` counts from `from`. */
  alertHistogram(accountId: string, filter: AlertFilter, from: number, bucketMs: number, buckets: number): Promise<number[]>;
  /** Sets the status and, in the same transaction, writes the webhook deliveries of the change. */
  setAlertStatus(accountId: string, id: string, status: AlertStatus, at: number): Promise<AlertRow | undefined>;
  /** Assigns the alert to a member (user id) or to nobody (null); undefined when there is no such alert. */
  assignAlert(accountId: string, id: string, assignee: string | null): Promise<AlertRow | undefined>;

  addAlertNote(note: AlertNote): Promise<void>;
  /** An alert's notes, oldest first. */
  listAlertNotes(accountId: string, alertId: string): Promise<readonly AlertNote[]>;
  /** Deletes the account's alerts last seen before `before`, with their notes; answers how many alerts. */
  pruneAlerts(accountId: string, before: number): Promise<number>;
}

/** Counts over time: usage per period and per day (written by Store.commit) and the dashboard overview. */
export interface StatsStore {
  getUsage(accountId: string, period: string): Promise<UsageRow>;
  /** Daily accepted counts for the dashboard chart, `YYYY-MM-DD` -> count. */
  dailyCounts(accountId: string, since: number): Promise<readonly { day: string; count: number }[]>;
  /**
   * Counts for the dashboard overview: events and alerts per `bucketMs` since `since`, open
   * alerts, top actors and addresses; the events of the range read are the newest `maxEvents`
   * (a default bound) by arrival.
   */
  overview(accountId: string, since: number, bucketMs: number, maxEvents?: number): Promise<Overview>;
}

/**
 * What is stored about one actor, address or host, for its summary page. Every read is bounded:
 * the counts stop at ENTITY_COUNT_CAP events and alerts, the sample holds the newest
 * ENTITY_SAMPLE events, and a host (which no index covers) is looked for among the account's
 * newest ENTITY_HOST_SCAN events of the window.
 */
export interface EntityStore {
  activity(accountId: string, entity: EntityRef, window: EntityWindow): Promise<EntityActivity>;
  /** Alerts about the entity seen in the window: by actor id, by subject, or by the address in their details. */
  alerts(accountId: string, entity: EntityRef, window: EntityWindow, recent: number): Promise<EntityAlerts>;
  /** The address of each of these events that has one, by event id (the account's events only). */
  eventAddresses(accountId: string, eventIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
}

/** Dashboard sessions, each tied to the key it was opened with. */
export interface SessionStore {
  createDashboardSession(session: DashboardSession): Promise<void>;
  /** The session with this id hash and the hash of the key it was opened with, unless it expired by `now`. */
  findDashboardSession(idHash: string, now: number): Promise<{ session: DashboardSession; keyHash: string } | undefined>;
  /** Ends one session; also removes every session that expired before `now`. */
  deleteDashboardSession(idHash: string, now: number): Promise<void>;
}

/**
 * People, their memberships, single-use tokens, sessions and single sign-on settings. Emails are
 * stored and looked up in lower case.
 */
export interface MemberStore {
  createUser(user: UserRecord): Promise<UserRecord>;
  getUser(id: string): Promise<UserRecord | undefined>;
  findUserByEmail(email: string): Promise<UserRecord | undefined>;
  updateUser(
    id: string,
    patch: Partial<Pick<UserRecord, 'name' | 'passwordHash' | 'totpSecret' | 'totpEnabledAt' | 'recoveryHashes' | 'passwordChangedAt' | 'lastSignInAt'>>,
  ): Promise<UserRecord | undefined>;
  /**
   * Records `step` as the last accepted TOTP step when it is later than the stored one; false when
   * a code of this step or a later one was accepted already (a code works once, also across instances).
   */
  acceptTotpStep(userId: string, step: number): Promise<boolean>;
  /** Removes one recovery code hash; false when it is not (or no longer) there. */
  useRecoveryCode(userId: string, hash: string): Promise<boolean>;

  addMember(member: MemberRecord): Promise<void>;
  getMember(accountId: string, userId: string): Promise<MemberRecord | undefined>;
  /** An account's members with their users, oldest first. */
  listMembers(accountId: string): Promise<readonly { member: MemberRecord; user: UserRecord }[]>;
  /** The accounts a person belongs to. */
  membershipsOf(userId: string): Promise<readonly MemberRecord[]>;
  setMemberRole(accountId: string, userId: string, role: Role): Promise<MemberRecord | undefined>;
  /** Removes the membership and revokes the person's sessions in the account; false when there was none. */
  removeMember(accountId: string, userId: string, at: number): Promise<boolean>;

  createToken(token: MemberToken): Promise<void>;
  /** The token with this hash, unless used or expired by `now`. */
  findToken(tokenHash: string, now: number): Promise<MemberToken | undefined>;
  /** Marks the token used; false when it was used already (so of two concurrent uses, one wins). */
  useToken(tokenHash: string, at: number): Promise<boolean>;
  /** An account's unused, unexpired invitations. */
  listInvitations(accountId: string, now: number): Promise<readonly MemberToken[]>;
  /** Withdraws an invitation by its public id; false when there is none. */
  revokeInvitation(accountId: string, id: string, at: number): Promise<boolean>;

  createSession(session: MemberSession): Promise<void>;
  /** The session with this cookie hash, unless revoked or expired by `now`. */
  findSession(idHash: string, now: number): Promise<MemberSession | undefined>;
  /** Records that the session was used (at most once a minute is enough for the list). */
  touchSession(id: string, at: number): Promise<void>;
  /** A person's sessions that are neither revoked nor expired, newest first (`accountId`: in that account only). */
  listSessions(userId: string, now: number, accountId?: string): Promise<readonly MemberSession[]>;
  /** Revokes one session; false when there is no such live session of this person. */
  revokeSession(userId: string, id: string, at: number): Promise<boolean>;
  /** Revokes every live session of a person (in one account, or everywhere); returns how many. */
  revokeSessionsOf(userId: string, at: number, accountId?: string): Promise<number>;

  getSsoConfig(accountId: string): Promise<SsoConfig | undefined>;
  putSsoConfig(config: SsoConfig): Promise<void>;
  deleteSsoConfig(accountId: string): Promise<boolean>;
  /** Deletes tokens and sessions that ended before `before`. */
  pruneExpired(before: number): Promise<number>;
}

/** The audit trail: entries are appended and read, never changed; only retention removes them. */
export interface AuditStore {
  append(entry: AuditEntry): Promise<void>;
  /** An account's entries, newest first. */
  list(accountId: string, filter: AuditFilter, limit: number, cursor?: string): Promise<Page<AuditEntry>>;
  /** Retention: removes the account's entries older than `before`; returns how many. */
  prune(accountId: string, before: number): Promise<number>;
}

/**
 * Data subjects: erasure jobs, the rows an erasure reads and changes, and the suppression list.
 * A job is held by one instance at a time through its lease: `claimJob` takes a job whose lease
 * ran out (queued, or left by an instance that stopped), and `updateJob` records progress only
 * while the caller still holds it.
 */
/** How an erasure's scrub treats PostgreSQL's relations (SQLite's scrub leaves no erased byte without them). */
export interface ScrubOptions {
  /** Rewrite each relation with VACUUM FULL, so that no removed row version or index key stays in its files. */
  readonly rewrite?: boolean;
  /** Called after each relation (the erasure renews its lease). */
  readonly between?: () => Promise<void>;
}

export interface SubjectStore {
  createJob(job: SubjectJobRow): Promise<void>;
  getJob(accountId: string, id: string): Promise<SubjectJobRow | undefined>;
  /** The account's jobs, newest first. */
  listJobs(accountId: string, limit: number): Promise<readonly SubjectJobRow[]>;
  /** An unfinished job of any account whose lease ran out by `now`, now held by `owner` for `leaseMs`; undefined when none. */
  claimJob(owner: string, now: number, leaseMs: number): Promise<SubjectJobRow | undefined>;
  /** Records progress and renews the lease; false when `owner` no longer holds the job. */
  updateJob(id: string, owner: string, progress: SubjectJobProgress): Promise<boolean>;
  /**
   * The account's rows of `table` after `after` (in key order), at most `limit`, whose erasable
   * columns contain one of the needles (case-insensitive substring, as written or JSON-escaped):
   * a superset of the rows that mention them.
   */
  findMentions(table: ErasableTable, accountId: string, needles: readonly string[], after: string | undefined, limit: number): Promise<readonly MentionRow[]>;
  /** Deletes the account's rows of `table` with these keys; answers how many, and the relations they were in. */
  deleteRows(table: ErasableTable, accountId: string, keys: readonly string[]): Promise<ErasedRows>;
  /** Replaces erasable columns of one of the account's rows; false when there is no such row. */
  rewriteRow(table: ErasableTable, accountId: string, key: string, values: Readonly<Record<string, string | null>>): Promise<boolean>;
  /** SQLite: deletes the hour summaries of these actors and addresses (PostgreSQL has none). */
  deleteEventSummaries(accountId: string, actors: readonly string[], addresses: readonly string[]): Promise<number>;
  /**
   * Removes the bytes an erasure's deletes and rewrites left behind. SQLite: merges the full-text
   * indexes (dropping deleted rows' terms) and empties the WAL; false when a reader's old snapshot
   * kept the WAL from being emptied (try again later). PostgreSQL: VACUUMs these relations, or,
   * when the caller does not know which relations the erasure wrote (undefined), every relation
   * an erasure writes; with `rewrite`, rewrites them instead (VACUUM FULL: new files, indexes
   * rebuilt), calling `between` after each; false, rewriting nothing, when a session still holds
   * a snapshot older than the erasure's writes (the rewrite would copy them).
   */
  scrub(relations: readonly string[] | undefined, options?: ScrubOptions): Promise<boolean>;
  /** The account's notes with these ids (an export reads them whole). */
  notesByIds(accountId: string, ids: readonly string[]): Promise<readonly AlertNote[]>;
  /** Adds or extends suppressions until `until`. */
  addSuppressions(accountId: string, entries: readonly { readonly hash: string; readonly kind: string }[], until: number, at: number): Promise<void>;
  /** The account's suppressions in force at `now`. */
  listSuppressions(accountId: string, now: number): Promise<readonly { readonly hash: string; readonly kind: string; readonly until: number }[]>;
  /** The account's suppressions in force at `now` after the hash `after`, in hash order, at most `limit`. */
  pageSuppressions(accountId: string, now: number, after: string | undefined, limit: number): Promise<readonly SuppressionRow[]>;
  /** Removes the account's suppressions with these hashes; answers the rows removed (expired ones included). */
  removeSuppressions(accountId: string, hashes: readonly string[]): Promise<readonly SuppressionRow[]>;
  /** Retention: removes every account's suppressions that expired by `now`; answers how many. */
  pruneSuppressions(now: number): Promise<number>;
}

/** Threat models and their saved versions. */
export interface ThreatModelStore {
  /** The account's threat models (current versions), oldest first. */
  listThreatModels(accountId: string): Promise<readonly ThreatModelRow[]>;
  getThreatModel(accountId: string, id: string): Promise<ThreatModelRow | undefined>;
  /** Inserts the model at version 1 and records that version, in one transaction. */
  createThreatModel(row: Omit<ThreatModelRow, 'version' | 'updatedAt' | 'suspendedAt' | 'suspendedReason'>): Promise<ThreatModelRow>;
  /**
   * Saves a new version when the stored one is still `expectedVersion` (version + 1, recorded in
   * the versions), which clears a suspension; undefined when the model is gone or another change
   * came first.
   */
  updateThreatModel(
    accountId: string,
    id: string,
    expectedVersion: number,
    change: { readonly enabled: boolean; readonly definition: Record<string, unknown>; readonly source: Record<string, unknown>; readonly at: number },
  ): Promise<ThreatModelRow | undefined>;
  /**
   * Suspends the model (it keeps its definition and version but does not run) when its current
   * version is still `version` and it is not suspended already; false otherwise, so that of
   * several instances suspending one model at once, one does.
   */
  suspendThreatModel(accountId: string, id: string, version: number, at: number, reason: string): Promise<boolean>;
  /** Deletes the model and its versions; false when there was none. */
  deleteThreatModel(accountId: string, id: string): Promise<boolean>;
  /** Every saved version, newest first. */
  listThreatModelVersions(accountId: string, id: string): Promise<readonly ThreatModelVersionRow[]>;
}

/** A database: its aggregates, the ingestion commit that writes across them, and its upkeep. */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly accounts: AccountStore;
  readonly events: EventStore;
  readonly alerts: AlertStore;
  readonly stats: StatsStore;
  readonly entities: EntityStore;
  readonly sessions: SessionStore;
  readonly threatModels: ThreatModelStore;
  readonly members: MemberStore;
  readonly audit: AuditStore;
  readonly subjects: SubjectStore;
  /** Outbound webhook endpoints and their deliveries (the outbox). */
  readonly webhooks: WebhookStore;

  migrate(): Promise<void>;
  /** Throws StoreUnavailableError when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;

  /**
   * Writes one commit group in one transaction; all or nothing: what it writes is planned once
   * (commit-plan.ts). A store that coalesces (coalescesCommits) may write commits queued
   * together in one transaction, and then a failure fails them all; `alone` asks for a
   * transaction of the group's own, which is how a caller isolates one bad group from its
   * neighbours.
   */
  commit(batch: CommitBatch, options?: CommitOptions): Promise<void>;
  /**
   * The store writes commits that queued behind a transaction together in the next one (the
   * SQLite writer thread), so a failed commit may have failed for a neighbour's row.
   */
  readonly coalescesCommits?: boolean;

  /**
   * Periodic upkeep, safe to call from every instance at any time (start-up, then e.g. hourly):
   * PostgreSQL creates the event partitions for the month of `now` and the months ahead, and
   * moves into them any rows that fell into the default partition. A no-op on SQLite.
   */
  maintain(now: number): Promise<void>;
}

/**
 * The database refused a write for what it contains: a duplicate id or key hash, or text it
 * cannot store (PostgreSQL text cannot hold U+0000). Nothing was written and a retry would
 * fail the same way: the caller's mistake, not an outage.
 */
export class StoreRejectedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreRejectedError';
  }
}

/** The database cannot serve the request (locked, full, unreachable). Maps to 503 UNAVAILABLE. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
