import type { KeyKind, KeyScope, Role } from '../event/account.js';
import type { QueryNode } from '../util/search-query.js';

export interface ApiKeyRecord {
  readonly id: string;
  readonly accountId: string;
  readonly kind: KeyKind;
  /** First characters of the key, safe to show (e.g. `vgl_sk_AbC1`). */
  readonly prefix: string;
  readonly allowedOrigins: readonly string[];
  readonly createdAt: number;
  readonly revokedAt: number | null;
  /** What the key may do; a key made before scopes existed has its kind's full set. */
  readonly scopes: readonly KeyScope[];
  /** What the key is for, as its creator named it. */
  readonly name: string | null;
}

/** One event as persisted: indexed columns plus the full JSON document. */
export interface EventRow {
  readonly id: string;
  readonly accountId: string;
  readonly type: string;
  readonly eventId: string | null;
  readonly occurredAt: number;
  readonly receivedAt: number;
  readonly actorId: string | null;
  readonly ip: string | null;
  readonly riskScore: number;
  readonly tags: readonly string[];
  /** The stored document (event fields, enrichment, risk, alert refs); never contains password_sha1. */
  readonly doc: Readonly<Record<string, unknown>>;
}

/**
 * An event as the ingestion pipeline hands it to the store: the document is already its JSON
 * text, made once, and the object it was made from is not kept while the commit waits.
 */
export interface NewEventRow extends Omit<EventRow, 'doc'> {
  readonly docJson: string;
  /** What the full-text index holds of the event (search-text.ts, eventSearchText). */
  readonly searchText: string;
}

/** The document text an event is stored with. */
export function docTextOf(e: EventRow | NewEventRow): string {
  return 'docJson' in e ? e.docJson : JSON.stringify(e.doc);
}

export type AlertStatus = 'open' | 'acknowledged' | 'resolved' | 'false_positive';

export interface AlertRow {
  readonly id: string;
  readonly accountId: string;
  readonly type: string;
  readonly severity: string;
  readonly subject: string;
  readonly status: AlertStatus;
  readonly count: number;
  readonly firstSeen: number;
  readonly lastSeen: number;
  readonly actorId: string | null;
  readonly eventIds: readonly string[];
  /** Detector-specific evidence (thresholds crossed, locations, chain stages). */
  readonly details: Readonly<Record<string, unknown>>;
  /** The member (user id) the alert is assigned to; detection never sets it. */
  readonly assignee?: string | null;
}

/** A change to an alert produced by the detect stage, applied in the event's commit. */
export interface AlertWrite {
  readonly alert: AlertRow;
  /** true: insert; false: update count/lastSeen/eventIds/details of the existing row. */
  readonly opened: boolean;
}

export interface UsageDelta {
  readonly accountId: string;
  /** `YYYY-MM` in UTC. */
  readonly period: string;
  /** `YYYY-MM-DD` in UTC, for the daily chart. */
  readonly day: string;
  readonly used: number;
  readonly dropped: number;
}

export interface UsageRow {
  readonly accountId: string;
  readonly period: string;
  readonly used: number;
  readonly dropped: number;
}

export interface IdempotencyRow {
  readonly accountId: string;
  readonly eventId: string;
  /** The 202 body first answered for this event_id. */
  readonly response: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
  /** SHA-256 (hex) of the event first sent with this key; null for rows written before digests were kept. */
  readonly payloadDigest: string | null;
}

/** Everything one commit group writes in one transaction. */
export interface CommitBatch {
  readonly events: readonly (EventRow | NewEventRow)[];
  readonly alerts: readonly AlertWrite[];
  readonly usage: readonly UsageDelta[];
  readonly idempotency: readonly IdempotencyRow[];
}

/** An order of the event list: by event time or by risk, `-` for the highest first; id breaks ties. */
export type EventSort = '-occurred_at' | 'occurred_at' | '-risk' | 'risk';
/** An order of the alert list: by last or first sighting or by severity, `-` for the highest first; id breaks ties. */
export type AlertSort = '-last_seen' | 'last_seen' | '-first_seen' | 'first_seen' | '-severity' | 'severity';

export interface EventFilter {
  /** A search query (util/search-query.ts), read against EVENT_FIELDS. */
  readonly query?: QueryNode | null;
  /** Without one, the newest id first and the cursor is an id (the order retention and dry runs read in). */
  readonly sort?: EventSort;
  readonly type?: string;
  /** Prefix such as `auth.` or `auth.login.` */
  readonly typePrefix?: string;
  readonly actorId?: string;
  readonly ip?: string;
  readonly minRisk?: number;
  readonly since?: number;
  readonly until?: number;
  readonly tag?: string;
}

export interface AlertFilter {
  /** A search query (util/search-query.ts), read against ALERT_FIELDS. */
  readonly query?: QueryNode | null;
  /** Without one, the newest id first and the cursor is an id. */
  readonly sort?: AlertSort;
  readonly type?: string;
  /** Prefix such as `auth.` or `auth.brute_force.` */
  readonly typePrefix?: string;
  readonly severity?: string;
  readonly status?: AlertStatus;
  readonly actorId?: string;
  /** Alerts about this address: subject `ip:<address>`, or an `ip` member of the details. */
  readonly ip?: string;
  /** Alerts last seen at or after this time. */
  readonly since?: number;
  /** Alerts first seen before this time. */
  readonly until?: number;
  /** A user id, or null for unassigned alerts. */
  readonly assignee?: string | null;
  /** Only these alert ids. */
  readonly ids?: readonly string[];
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Opaque cursor for the next page, null at the end. */
  readonly nextCursor: string | null;
}

/** A custom threat model's current version; `definition` and `source` are the threat-models module's documents. */
export interface ThreatModelRow {
  readonly id: string;
  readonly accountId: string;
  readonly version: number;
  readonly enabled: boolean;
  readonly definition: Readonly<Record<string, unknown>>;
  readonly source: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When the current version was suspended for what it cost to evaluate, and why; null when it runs. */
  readonly suspendedAt: number | null;
  readonly suspendedReason: string | null;
}

/** One saved version of a threat model. */
export interface ThreatModelVersionRow {
  readonly modelId: string;
  readonly accountId: string;
  readonly version: number;
  readonly definition: Readonly<Record<string, unknown>>;
  readonly source: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
}

/** A dashboard sign-in: the session id is known to the store only by its hash. */
export interface DashboardSession {
  readonly idHash: string;
  readonly accountId: string;
  readonly keyId: string;
  /** Sent back by the browser in a header on every state-changing call. */
  readonly csrfToken: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface CountPoint {
  /** Start of the bucket, Unix milliseconds. */
  readonly at: number;
  readonly count: number;
}

/** An actor or address of the overview: its events' count and highest risk, and its alerts seen in the range. */
export interface TopValue {
  readonly value: string;
  readonly count: number;
  readonly maxRisk: number;
  readonly alerts: number;
}

/** The dashboard overview's aggregates for one account over one time range. */
export interface Overview {
  /** Events per bucket of event time (occurred_at). */
  readonly events: readonly CountPoint[];
  /** Alerts per bucket of first sighting. */
  readonly alerts: readonly CountPoint[];
  /** Open and acknowledged alerts per severity. */
  readonly openBySeverity: Readonly<Record<string, number>>;
  /** Ranked by highest risk, then alerts, then events. */
  readonly topActors: readonly TopValue[];
  readonly topIps: readonly TopValue[];
  /** Open and acknowledged kill-chain alerts, most recent first. */
  readonly chains: readonly AlertRow[];
  /**
   * The range holds more events than the overview reads: the event counts and the top actors and
   * addresses are those of its newest events by arrival (the bound), not of the whole range.
   */
  readonly eventsCapped: boolean;
}

/** What an entity summary is about: an actor id, an address, or the host an event names. */
export interface EntityRef {
  readonly kind: 'actor' | 'ip' | 'host';
  readonly value: string;
}

/** The event-time range of an entity summary, and the width of its risk buckets. */
export interface EntityWindow {
  readonly since: number;
  readonly until: number;
  readonly bucketMs: number;
}

/** One bucket of an entity's events by event time. */
export interface EntityBucket {
  readonly at: number;
  readonly count: number;
  readonly maxRisk: number;
  readonly avgRisk: number;
  readonly firstSeen: number;
  readonly lastSeen: number;
}

/** An entity's events in a window, as far as the store reads them (see EntityStore). */
export interface EntityActivity {
  readonly buckets: readonly EntityBucket[];
  /** The newest events, whose documents give the entity's countries, devices, sessions and the rest. */
  readonly sample: readonly EventRow[];
  /** Fewer events were counted than the window holds: the counts stopped at the store's bound. */
  readonly capped: boolean;
}

/** An entity's alerts in a window. */
export interface EntityAlerts {
  readonly total: number;
  readonly open: number;
  /** The most recent, newest first. */
  readonly recent: readonly AlertRow[];
}

/** A note written with an alert status change. */
export interface AlertNote {
  readonly id: string;
  readonly accountId: string;
  readonly alertId: string;
  readonly status: AlertStatus;
  readonly note: string;
  readonly createdAt: number;
  /** Who wrote it; null for notes written before people signed in. */
  readonly author: Actor | null;
}

/** Who did something: a member, an API key, the operator (CLI, admin API), Vigil itself, or nobody known (a failed sign-in). */
export interface Actor {
  readonly kind: 'member' | 'key' | 'operator' | 'system' | 'anonymous';
  /** The user id, key id, or null. */
  readonly id: string | null;
  /** What a reader recognises: an email, a key prefix, `cli`, `admin-api`. */
  readonly label: string | null;
}

/** A person, instance-wide (one per email). */
export interface UserRecord {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  /** Null for a person who signs in only through single sign-on. */
  readonly passwordHash: string | null;
  /** Base32 TOTP secret; set while enrolment is pending too (`totpEnabledAt` null). */
  readonly totpSecret: string | null;
  readonly totpEnabledAt: number | null;
  /** The last TOTP time step accepted: a code is accepted once. */
  readonly totpLastStep: number | null;
  /** SHA-256 of the unused recovery codes. */
  readonly recoveryHashes: readonly string[];
  readonly createdAt: number;
  readonly passwordChangedAt: number | null;
  readonly lastSignInAt: number | null;
}

/** A person's membership of an account. */
export interface MemberRecord {
  readonly accountId: string;
  readonly userId: string;
  readonly role: Role;
  readonly createdAt: number;
  readonly createdBy: string | null;
}

export type MemberTokenPurpose = 'invite' | 'reset' | 'mfa' | 'oidc' | 'set-password';

/** A single-use token, known to the store only by its hash. */
export interface MemberToken {
  readonly tokenHash: string;
  readonly id: string;
  readonly purpose: MemberTokenPurpose;
  readonly accountId: string | null;
  readonly userId: string | null;
  readonly email: string | null;
  readonly role: Role | null;
  readonly data: Readonly<Record<string, unknown>>;
  readonly createdBy: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly usedAt: number | null;
}

/** A person's dashboard session in one account. */
export interface MemberSession {
  /** Public id, shown in session lists. */
  readonly id: string;
  /** SHA-256 of the cookie value. */
  readonly idHash: string;
  readonly accountId: string;
  readonly userId: string;
  readonly csrfToken: string;
  readonly method: 'password' | 'password+totp' | 'password+recovery' | 'oidc' | 'invitation' | 'reset';
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  readonly expiresAt: number;
  readonly revokedAt: number | null;
}

/**
 * Single sign-on with an OpenID provider: what an account stores and what the instance's settings
 * (VIGIL_OIDC_ISSUER and the rest) say share this shape.
 */
export interface SsoSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Email domains allowed to sign in (lower case); empty: any verified email. */
  readonly allowedDomains: readonly string[];
  /** The claim whose value picks the role (a string or an array of strings); null: every person gets `defaultRole`. */
  readonly roleClaim: string | null;
  /** Claim value -> role. */
  readonly roleMap: Readonly<Record<string, Role>>;
  /** The role of a person no mapping matches; null refuses them. */
  readonly defaultRole: Role | null;
}

/** An account's OpenID Connect settings. */
export interface SsoConfig extends SsoSettings {
  readonly accountId: string;
  readonly updatedAt: number;
}

/** One recorded change (append-only). */
export interface AuditEntry {
  readonly id: string;
  /** '' for an entry that belongs to no account (a failed sign-in of an unknown email). */
  readonly accountId: string;
  readonly at: number;
  readonly actor: Actor;
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly action: string;
  readonly targetKind: string | null;
  readonly targetId: string | null;
  /** Changed fields: before and after (never a secret). */
  readonly changes: Readonly<Record<string, { readonly before: unknown; readonly after: unknown }>>;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface AuditFilter {
  /** A user id, key id or `operator`. */
  readonly actorId?: string;
  /** An action, or a prefix ending in `.` (`alert.`). */
  readonly action?: string;
  readonly targetId?: string;
  readonly since?: number;
  readonly until?: number;
}

/** Where an erasure job is. */
export type SubjectJobStatus = 'queued' | 'running' | 'done' | 'failed';

/** One identifier on an account's suppression list (subject_suppressions): its keyed hash, never its value. */
export interface SuppressionRow {
  readonly hash: string;
  readonly kind: string;
  readonly createdAt: number;
  /** Events are suppressed until this instant (milliseconds), then stored again. */
  readonly until: number;
}

/** A data subject's erasure job as stored (subject_jobs). */
export interface SubjectJobRow {
  readonly id: string;
  readonly accountId: string;
  readonly kind: 'erase';
  readonly status: SubjectJobStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly finishedAt: number | null;
  /** Each identifier's kind and value hint: what the job shows, never the value. */
  readonly identifiers: readonly { readonly kind: string; readonly valueHint: string }[];
  /** The identifiers themselves while the job is unfinished (a restarted job needs them); null once it ends. */
  readonly pending: readonly { readonly kind: string; readonly value: string }[] | null;
  readonly suppressDays: number;
  readonly step: string | null;
  readonly doneSteps: number;
  readonly totalSteps: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly error: string | null;
  readonly leaseOwner: string | null;
  readonly leaseUntil: number;
}

/** What a job's holder records as it goes; the job's lease is renewed with it. */
export interface SubjectJobProgress {
  readonly status?: SubjectJobStatus;
  readonly step?: string | null;
  readonly doneSteps?: number;
  readonly counts?: Readonly<Record<string, number>>;
  readonly error?: string | null;
  readonly finishedAt?: number | null;
  /** Set to null when the job ends: its identifiers are then gone from the database. */
  readonly pending?: null;
  readonly leaseUntil: number;
  readonly at: number;
}

/** The tables an erasure reads and changes, with the key of their rows and the columns that may mention a subject. */
export const ERASABLE_TABLES = {
  events: { key: 'id', columns: ['event_id', 'actor_id', 'ip', 'doc'] },
  idempotency: { key: 'event_id', columns: ['event_id', 'response'] },
  alerts: { key: 'id', columns: ['subject', 'actor_id', 'details'] },
  alert_notes: { key: 'id', columns: ['note'] },
  audit_log: { key: 'id', columns: ['actor_label', 'ip', 'user_agent', 'target_id', 'changes', 'details'] },
  webhook_deliveries: { key: 'id', columns: ['event', 'alert', 'last_error'] },
} as const;
export type ErasableTable = keyof typeof ERASABLE_TABLES;

/** What a delete of an erasure removed: how many rows, and the relations (PostgreSQL: the events table's partitions) they were in. */
export interface ErasedRows {
  readonly count: number;
  readonly relations: readonly string[];
}

/** A row that may mention a subject: its key and the text of its erasable columns. */
export interface MentionRow {
  readonly key: string;
  readonly columns: Readonly<Record<string, string | null>>;
}
