/**
 * The suppression list: identifiers of erased data subjects whose later events an account does
 * not keep, for a number of days. A row holds the identifier's keyed hash — its pseudonym under
 * the account's key (src/privacy/pseudonym.ts), so the same canonical form: emails lower-cased,
 * addresses in canonical text — and never the value; without the instance's master secret no
 * hash can be made, and suppression is refused.
 *
 * Ingestion reads each account's list from a copy in memory, loaded once from the store: a change
 * (an erasure's last step, a removal) writes a new stamp for the account into the detection state
 * store (shared through Redis when scaled out), and an instance whose copy was loaded under
 * another stamp loads it again. Expiry needs no reload: each hash carries its end, compared with
 * the request's time. A copy older than `refreshMs` is reloaded in the background, which covers
 * a change stamped while the shared state store was unreachable. The stamp is the one the request
 * read at authentication with its account's other stamps (src/detection/state/stamps.ts), so it
 * costs the request no round trip of its own.
 */
import { DEVICE_KEYS } from '../detection/metadata.js';
import type { StateStore } from '../detection/state/state-store.js';
import { AccountStamps } from '../detection/state/stamps.js';
import type { Stamps } from '../event/account.js';
import type { ValidatedEvent } from '../event/types.js';
import type { SubjectStore } from '../storage/store.js';
import { pseudonymOf, type AccountSecret, type PseudonymKeys, type SubjectKind } from './pseudonym.js';
import type { SubjectIdentifier } from './subject.js';

/** Longest suppression an erasure may ask for: ten years. */
export const MAX_SUPPRESS_DAYS = 3650;
/** Most identifiers an account's list holds at a time: what one account's copy in memory can hold. */
export const MAX_SUPPRESSIONS = 10_000;

/** One identifier as the list holds it. */
export interface SuppressionEntry {
  readonly hash: string;
  readonly kind: SubjectKind;
}

/** The identifiers' keyed hashes under the account's key; undefined when the instance has no master secret. */
export function suppressionEntries(keys: PseudonymKeys, accountId: string, identifiers: readonly SubjectIdentifier[]): SuppressionEntry[] | undefined {
  const secret = keys.forAccount(accountId);
  if (secret === undefined) return undefined;
  const seen = new Set<string>();
  const out: SuppressionEntry[] = [];
  for (const { kind, value } of identifiers) {
    const hash = pseudonymOf(secret, kind, value);
    if (!seen.has(hash)) out.push({ hash, kind });
    seen.add(hash);
  }
  return out;
}

/** One account's suppressions in force, as one request reads them. */
export class Suppressions {
  static readonly NONE = new Suppressions(new Map(), undefined);

  constructor(
    /** Hash -> the instant it stops suppressing. */
    private readonly hashes: ReadonlyMap<string, number>,
    private readonly secret: AccountSecret | undefined,
  ) {}

  /** True when no event of the account can be suppressed: the stage hashes nothing. */
  get empty(): boolean {
    return this.hashes.size === 0 || this.secret === undefined;
  }

  get size(): number {
    return this.hashes.size;
  }

  /** Whether the event's actor id, email, address or device id (metadata) is suppressed at `now`. */
  suppresses(event: ValidatedEvent, now: number): boolean {
    if (this.empty) return false;
    if (event.actorId !== undefined && this.holds('actor_id', event.actorId, now)) return true;
    if (event.email !== undefined && this.holds('email', event.email, now)) return true;
    if (event.ip !== undefined && this.holds('ip', event.ip, now)) return true;
    for (const key of DEVICE_KEYS) {
      const device = event.metadata[key];
      if (typeof device === 'string' && device.length > 0 && this.holds('device_id', device, now)) return true;
    }
    return false;
  }

  private holds(kind: SubjectKind, value: string, now: number): boolean {
    const until = this.hashes.get(pseudonymOf(this.secret as AccountSecret, kind, value));
    return until !== undefined && until > now;
  }
}

interface Entry {
  readonly suppressions: Suppressions;
  readonly stamp: string | null;
  readonly loadedAt: number;
}

export interface SuppressionListOptions {
  /** Hashes kept in memory over every account (default 200,000); the accounts least recently used are dropped first. */
  readonly maxCachedHashes?: number;
  /** How old a copy may get before it is reloaded in the background (default 60 s). */
  readonly refreshMs?: number;
  /** Monotonic milliseconds (wall time, not event time). */
  readonly now?: () => number;
}

/** Every account's suppression list as ingestion reads it: one copy per account, loaded once and kept under its stamp. */
export class SuppressionList {
  /** In order of last use, least recent first. */
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, { readonly stamp: string | null; readonly promise: Promise<Suppressions> }>();
  private readonly stamps: AccountStamps;
  private readonly maxCachedHashes: number;
  private readonly refreshMs: number;
  private readonly monotonic: () => number;
  private cachedHashes = 0;

  constructor(
    private readonly store: Pick<SubjectStore, 'listSuppressions'>,
    state: StateStore,
    private readonly keys: PseudonymKeys,
    options: SuppressionListOptions = {},
  ) {
    this.stamps = new AccountStamps(state);
    this.maxCachedHashes = options.maxCachedHashes ?? 200_000;
    this.refreshMs = options.refreshMs ?? 60_000;
    this.monotonic = options.now ?? (() => performance.now());
  }

  /** The identifiers' hashes under the account's key; undefined when the instance has no master secret. */
  entriesOf(accountId: string, identifiers: readonly SubjectIdentifier[]): SuppressionEntry[] | undefined {
    return suppressionEntries(this.keys, accountId, identifiers);
  }

  /**
   * The account's suppressions: at once when this instance's copy is current, else once loaded.
   * `stamps` are the ones the request read; without them the account's stamps are read here.
   */
  inForce(accountId: string, now: number, stamps?: Stamps): Suppressions | Promise<Suppressions> {
    // Without a master secret no hash can be made, so no event can match: nothing to read.
    if (!this.keys.available) return Suppressions.NONE;
    const read = stamps ?? this.stamps.read(accountId);
    if (!(read instanceof Promise)) return this.resolve(accountId, read.suppressions, now);
    return read.then((found) => this.resolve(accountId, found.suppressions, now));
  }

  /**
   * The account's list changed: a new stamp makes every instance load it again on its next
   * request. Awaited before the change is answered, so the answer means the change is in force.
   */
  async changed(accountId: string): Promise<void> {
    this.drop(accountId);
    await this.stamps.bump(accountId, 'suppressions');
  }

  private resolve(accountId: string, stamp: string | null, now: number): Suppressions | Promise<Suppressions> {
    const entry = this.entries.get(accountId);
    if (entry === undefined || entry.stamp !== stamp) return this.load(accountId, stamp, now);
    // Most recently used last: eviction takes the first.
    this.entries.delete(accountId);
    this.entries.set(accountId, entry);
    if (this.monotonic() - entry.loadedAt > this.refreshMs && !this.loading.has(accountId)) void this.load(accountId, stamp, now).catch(() => undefined);
    return entry.suppressions;
  }

  /** Loads the rows stored before `stamp` was read (or later ones); one load per account and stamp at a time. */
  private load(accountId: string, stamp: string | null, now: number): Promise<Suppressions> {
    const pending = this.loading.get(accountId);
    if (pending !== undefined && pending.stamp === stamp) return pending.promise;
    const promise = this.store.listSuppressions(accountId, now).then(
      (rows) => {
        const hashes = new Map<string, number>();
        for (const row of rows) hashes.set(row.hash, row.until);
        const suppressions = hashes.size === 0 ? Suppressions.NONE : new Suppressions(hashes, this.keys.forAccount(accountId));
        if (this.loading.get(accountId)?.promise === promise) {
          this.loading.delete(accountId);
          this.keep(accountId, { suppressions, stamp, loadedAt: this.monotonic() });
        }
        return suppressions;
      },
      (err: unknown) => {
        if (this.loading.get(accountId)?.promise === promise) this.loading.delete(accountId);
        throw err;
      },
    );
    this.loading.set(accountId, { stamp, promise });
    return promise;
  }

  private keep(accountId: string, entry: Entry): void {
    this.drop(accountId);
    this.entries.set(accountId, entry);
    // An account with an empty list still takes a place.
    this.cachedHashes += Math.max(1, entry.suppressions.size);
    for (const [oldest] of this.entries) {
      if (this.cachedHashes <= this.maxCachedHashes || oldest === accountId) break;
      this.drop(oldest);
    }
  }

  private drop(accountId: string): void {
    const entry = this.entries.get(accountId);
    if (entry === undefined) return;
    this.entries.delete(accountId);
    this.cachedHashes -= Math.max(1, entry.suppressions.size);
  }
}
