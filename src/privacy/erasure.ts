/**
 * Erasure of a data subject: a job per request, run in steps by whichever instance holds its
 * lease, resumable after a crash (each step is idempotent: run again, it finds nothing left to do).
 *
 * What each step does in the account (and only there):
 * - `events`: deletes every stored event that mentions an identifier (its enrichment, metadata
 *   and full-text terms go with the row), and the idempotency rows that mention one;
 * - `summaries`: SQLite's hour summaries of the subject's actor ids and addresses;
 * - `alerts`, `notes`, `audit`: keeps the rows, with each mention replaced by `[erased]`;
 * - `deliveries`: deletes the webhook deliveries (the outbox, pending or sent) that mention one;
 * - `state`: deletes detection state records (baselines, seen countries and devices, windows,
 *   counters, alert records) whose key or values mention one, and the account's saved dry-run
 *   states;
 * - `scrub`: SQLite: merges the full-text indexes and empties the WAL, so erased bytes leave the
 *   files (every connection deletes with secure_delete on); PostgreSQL: VACUUMs the relations the
 *   job wrote, so their dead row versions go, or, with `rewrite`, rewrites them (VACUUM FULL), so
 *   no byte of a removed row version or index key stays in their files;
 * - `suppress`: adds the identifiers' keyed hashes to the suppression list, when asked.
 */
import type { DryRunStates } from '../threat-models/dry-run-states.js';
import type { StateStore } from '../detection/state/state-store.js';
import type { Store } from '../storage/store.js';
import type { ErasableTable, MentionRow, SubjectJobRow } from '../storage/types.js';
import type { Clock } from '../util/clock.js';
import { DAY_MS } from '../util/duration.js';
import { newId, ulid } from '../util/ids.js';
import { identifierForms, SubjectMatcher, valueHint, type SubjectIdentifier } from './subject.js';

export const ERASE_STEPS = ['events', 'summaries', 'alerts', 'notes', 'audit', 'deliveries', 'state', 'scrub', 'suppress'] as const;
export type EraseStep = (typeof ERASE_STEPS)[number];

/** What a job counts, by what it erased or redacted. */
export type ErasureCounts = {
  events: number;
  alerts: number;
  notes: number;
  audit: number;
  state_keys: number;
  deliveries: number;
};

/** Rows read per page of a step: what the step holds in memory at a time. */
const PAGE = 500;

export interface ErasureOptions {
  readonly store: Store;
  readonly state: StateStore;
  readonly dryRunStates?: DryRunStates;
  readonly clock: Clock;
  /** How long a claimed job is held without news from its holder before another instance takes it over. */
  readonly leaseMs: number;
  /** How often an instance looks for jobs to run (queued, or left by an instance that stopped). */
  readonly pollMs: number;
  /** Further texts to erase for these identifiers (their pseudonyms), when the account has them. */
  readonly aliasesOf?: (accountId: string, identifiers: readonly SubjectIdentifier[]) => readonly string[];
  /** Keyed hashes of the identifiers for the suppression list. */
  readonly suppressionHashes?: (accountId: string, identifiers: readonly SubjectIdentifier[]) => readonly { hash: string; kind: string }[];
  /** Called after suppressions change (caches of the list are dropped). */
  readonly suppressionsChanged?: (accountId: string) => Promise<void>;
  readonly onError?: (err: unknown, job: SubjectJobRow) => void;
  /** PostgreSQL: the scrub rewrites the relations the job wrote (VACUUM FULL) instead of vacuuming them. */
  readonly rewrite?: boolean;
}

/** The job's step failed for a reason that is not the job's own (the store or state went away); it is tried again later. */
class LeaseLost extends Error {}

/** A reader's old snapshot keeps erased bytes (SQLite's WAL cannot be emptied, PostgreSQL's rewrite would copy them): the step runs again later. */
class ScrubBusy extends Error {}

/** Erasure jobs: submitted by the routes, run by every instance's runner under a lease. */
export class ErasureJobs {
  /** This runner's lease holder name: unique per process start, so a restarted process is a new holder. */
  private readonly owner = `run_${ulid()}`;
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: ErasureOptions) {}

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => this.kick(), this.options.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for jobs now (a job was just submitted). */
  kick(): void {
    if (this.running || this.stopped) return;
    this.running = this.drain()
      .catch(() => undefined)
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Stops looking for jobs and waits for the step in progress; an unfinished job is picked up again after its lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Waits until no job is being run by this instance (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async submit(accountId: string, identifiers: readonly SubjectIdentifier[], suppressDays: number): Promise<SubjectJobRow> {
    const now = this.options.clock.now();
    const job: SubjectJobRow = {
      id: newId('sjb', now),
      accountId,
      kind: 'erase',
      status: 'queued',
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
      identifiers: identifiers.map((i) => ({ kind: i.kind, valueHint: valueHint(i.value) })),
      pending: identifiers.map((i) => ({ kind: i.kind, value: i.value })),
      suppressDays,
      step: null,
      doneSteps: 0,
      totalSteps: ERASE_STEPS.length,
      counts: emptyCounts(),
      error: null,
      leaseOwner: null,
      leaseUntil: 0,
    };
    await this.options.store.subjects.createJob(job);
    this.kick();
    return job;
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const job = await this.options.store.subjects.claimJob(this.owner, this.options.clock.now(), this.options.leaseMs);
      if (job === undefined) return;
      try {
        await this.run(job);
      } catch (err) {
        if (err instanceof LeaseLost) continue;
        this.options.onError?.(err, job);
        // The lease runs out and a later pass (here or on another instance) runs the job again.
        await this.options.store.subjects
          .updateJob(job.id, this.owner, {
            error: 'interrupted; it is retried',
            leaseUntil: this.options.clock.now() + this.options.leaseMs,
            at: this.options.clock.now(),
          })
          .catch(() => undefined);
        return;
      }
    }
  }

  private async run(job: SubjectJobRow): Promise<void> {
    const { store } = this.options;
    const identifiers = (job.pending ?? []) as SubjectIdentifier[];
    const aliases = this.options.aliasesOf?.(job.accountId, identifiers) ?? [];
    const matcher = new SubjectMatcher(identifiers, aliases);
    const counts: ErasureCounts = { ...emptyCounts(), ...(job.counts as Partial<ErasureCounts>) };
    const progress = async (fields: { step?: string | null; doneSteps?: number } = {}) => {
      const at = this.options.clock.now();
      const held = await store.subjects.updateJob(job.id, this.owner, { ...fields, counts: { ...counts }, leaseUntil: at + this.options.leaseMs, at });
      if (!held || this.stopped) throw new LeaseLost();
    };
    const accountId = job.accountId;
    // The relations the job writes, for the scrub; unknown when an earlier run began the job
    // (it may have deleted rows this run will not find).
    const touched = job.step === null && job.doneSteps === 0 ? new Set<string>() : undefined;
    for (let i = job.doneSteps; i < ERASE_STEPS.length; i++) {
      const step = ERASE_STEPS[i] as EraseStep;
      await progress({ step });
      switch (step) {
        case 'events':
          counts.events += await this.deleteMentions('events', accountId, matcher, progress, touched);
          await this.deleteMentions('idempotency', accountId, matcher, progress, touched);
          break;
        case 'summaries': {
          const actors = identifiers.filter((id) => id.kind === 'actor_id').flatMap(identifierForms);
          const addresses = identifiers.filter((id) => id.kind === 'ip').flatMap(identifierForms);
          await store.subjects.deleteEventSummaries(accountId, [...actors, ...aliases], [...addresses, ...aliases]);
          break;
        }
        case 'alerts':
          counts.alerts += await this.redactMentions('alerts', accountId, matcher, progress, touched);
          break;
        case 'notes':
          counts.notes += await this.redactMentions('alert_notes', accountId, matcher, progress, touched);
          break;
        case 'audit':
          counts.audit += await this.redactMentions('audit_log', accountId, matcher, progress, touched);
          break;
        case 'deliveries':
          counts.deliveries += await this.deleteMentions('webhook_deliveries', accountId, matcher, progress, touched);
          break;
        case 'state':
          counts.state_keys += (await this.options.state.forget?.(accountId, (text) => matcher.mentions(text))) ?? 0;
          await this.options.dryRunStates?.forgetAccount?.(accountId);
          break;
        case 'scrub':
          touched?.add('subject_jobs');
          if (!(await store.subjects.scrub(touched && [...touched], { rewrite: this.options.rewrite, between: () => progress() })))
            throw new ScrubBusy("a reader's old snapshot keeps erased bytes (SQLite's WAL, or row versions a rewrite would copy); the scrub is tried again");
          break;
        case 'suppress':
          if (job.suppressDays > 0) {
            const hashes = this.options.suppressionHashes?.(accountId, identifiers) ?? [];
            const now = this.options.clock.now();
            await store.subjects.addSuppressions(accountId, hashes, now + job.suppressDays * DAY_MS, now);
            await this.options.suppressionsChanged?.(accountId);
          }
          break;
      }
      await progress({ doneSteps: i + 1 });
    }
    const at = this.options.clock.now();
    const finished = await store.subjects.updateJob(job.id, this.owner, {
      status: 'done',
      step: null,
      doneSteps: ERASE_STEPS.length,
      counts: { ...counts },
      error: null,
      finishedAt: at,
      pending: null,
      leaseUntil: at,
      at,
    });
    if (!finished) throw new LeaseLost();
    // The job row held the identifiers until now: its earlier versions go with this scrub (or,
    // when a reader keeps the WAL busy or the instance stops first, with the next job's scrub).
    await store.subjects.scrub(['subject_jobs'], { rewrite: this.options.rewrite });
  }

  /** Deletes the account's rows of `table` that mention the subject; answers how many. */
  private deleteMentions(
    table: ErasableTable,
    accountId: string,
    matcher: SubjectMatcher,
    progress: () => Promise<void>,
    touched: Set<string> | undefined,
  ): Promise<number> {
    return this.eachMentionPage(table, accountId, matcher, progress, async (rows) => {
      const keys = rows.filter((row) => Object.values(row.columns).some((text) => text !== null && matcher.columnMentions(text))).map((row) => row.key);
      const erased = await this.options.store.subjects.deleteRows(table, accountId, keys);
      for (const relation of erased.relations) touched?.add(relation);
      return erased.count;
    });
  }

  /** Rewrites the account's rows of `table` that mention the subject with each mention replaced; answers how many. */
  private redactMentions(
    table: ErasableTable,
    accountId: string,
    matcher: SubjectMatcher,
    progress: () => Promise<void>,
    touched: Set<string> | undefined,
  ): Promise<number> {
    return this.eachMentionPage(table, accountId, matcher, progress, async (rows) => {
      let changed = 0;
      for (const row of rows) {
        const values: Record<string, string | null> = {};
        for (const [column, text] of Object.entries(row.columns))
          if (text !== null && matcher.columnMentions(text)) values[column] = matcher.redactColumn(text);
        if (Object.keys(values).length > 0 && (await this.options.store.subjects.rewriteRow(table, accountId, row.key, values))) {
          changed++;
          touched?.add(table);
        }
      }
      return changed;
    });
  }

  /**
   * Walks the account's rows of `table` whose text may mention the subject, a page at a time in
   * key order, reporting progress after each; answers the sum of what `handle` answered per page.
   */
  private async eachMentionPage(
    table: ErasableTable,
    accountId: string,
    matcher: SubjectMatcher,
    progress: () => Promise<void>,
    handle: (rows: readonly MentionRow[]) => Promise<number>,
  ): Promise<number> {
    let total = 0;
    let after: string | undefined;
    for (;;) {
      const rows = await this.options.store.subjects.findMentions(table, accountId, matcher.searchTexts, after, PAGE);
      total += await handle(rows);
      await progress();
      if (rows.length < PAGE) return total;
      after = (rows[rows.length - 1] as { key: string }).key;
    }
  }
}

const emptyCounts = (): ErasureCounts => ({ events: 0, alerts: 0, notes: 0, audit: 0, state_keys: 0, deliveries: 0 });
