/**
 * One ingestion request as it moves through the stages, and the type it has after each:
 *   Received -> Validated -> Limited -> Deduplicated -> Screened -> Reserved -> Classified -> Enriched
 *            -> Looked up -> Detected -> Modelled -> Scored -> (stored: the answer)
 * As with the events (src/event/types.ts), one object travels: each stage adds its own members
 * (Object.assign, typed as the wider type) and never changes one an earlier stage set. Every member
 * is declared below in stage order, so the object keeps one shape from the first stage to the last.
 */
import type { AccountContext } from '../event/account.js';
import type { ClassifiedEvent, DetectedEvent, EnrichedEvent, ScoredEvent, ValidatedEvent } from '../event/types.js';
import type { WindowStatus } from '../limits/types.js';
import type { AlertWrite } from '../storage/types.js';
import type { ModelsInForce } from '../threat-models/registry.js';
import type { Seen } from './dedupe.js';
import type { EventOutcome } from './outcome.js';
import type { QuotaReservation } from './quota.js';
import type { FieldWarning } from './unknown-fields.js';
import type { IngestInput } from './validate.js';

/**
 * What a request holds until its events are stored: the event_id claims it took and its quota
 * reservation. The pipeline settles them at the request's end, in one place (ingest-pipeline.ts):
 * kept once the commit succeeded, given back when any stage failed.
 */
export class Holdings {
  /** The request's events, for the metric of a request that failed. */
  events = 0;
  claims: Seen | undefined = undefined;
  /** New events not kept because the account suppresses their subject. */
  suppressed = 0;
  reservation: QuotaReservation | undefined = undefined;

  /** The events were stored: requests waiting on the same event ids get their results. */
  keep(): void {
    this.claims?.settle(true);
  }

  /** The events were not stored: the claims are released and the month's reservation given back. */
  async giveBack(): Promise<void> {
    this.claims?.settle(false);
    await this.reservation?.release().catch(() => undefined);
  }

  /** Outcomes decided before the request's end that hold whatever its end: repeats, conflicts and suppressed subjects. */
  countSeen(count: (outcome: EventOutcome, n: number) => void): void {
    count('dropped_suppressed', this.suppressed);
    const seen = this.claims;
    if (seen === undefined) return;
    count('duplicate', seen.results.length - seen.fresh.length - seen.conflicts);
    count('rejected_conflict', seen.conflicts);
  }
}

/** A request as the HTTP route hands it over. */
export interface Received {
  readonly input: IngestInput;
  readonly account: AccountContext;
  readonly connectingIp: string;
  /** The request's User-Agent header, if it had one. */
  readonly userAgent?: string;
  /** Read once per request: every stage decides on the same instant. */
  readonly now: number;
  readonly held: Holdings;
}

export class IngestRequest {
  /** limit: the key's windows after this request. */
  limit: WindowStatus | undefined = undefined;
  /** dedupe: the answers of events seen before, and which events are new. */
  seen: Seen | undefined = undefined;
  /** suppress: request indexes of the new events whose subject is not suppressed, in order. */
  unsuppressed: readonly number[] | undefined = undefined;
  /** quota: the month's reservation. */
  quota: QuotaReservation | undefined = undefined;
  /** quota: request indexes of the events that go on, in order. */
  admitted: readonly number[] | undefined = undefined;
  /** quota: the id each of them is stored under (alert rows link it). */
  ids: readonly string[] | undefined = undefined;
  classified: readonly ClassifiedEvent[] | undefined = undefined;
  enriched: readonly EnrichedEvent[] | undefined = undefined;
  /** The account's threat models in force (a promise while a remote state store answers). */
  models: ModelsInForce | undefined = undefined;
  /** detect: the events with the built-in detectors' alerts. */
  detected: readonly DetectedEvent[] | undefined = undefined;
  /** detect: each event's alert rows to commit. */
  detectorWrites: readonly (readonly AlertWrite[])[] | undefined = undefined;
  /** model: the events with every alert, the threat models' included. */
  modelled: readonly DetectedEvent[] | undefined = undefined;
  /** model: each event's alert rows of the threat models; undefined when no model ran. */
  modelWrites: readonly (readonly AlertWrite[] | undefined)[] | undefined = undefined;
  scored: readonly ScoredEvent[] | undefined = undefined;

  constructor(
    readonly kind: IngestInput['kind'],
    readonly account: AccountContext,
    readonly now: number,
    readonly events: readonly ValidatedEvent[],
    /** Each event's unknown fields, by request index; undefined when no event has any. */
    readonly warnings: readonly (readonly FieldWarning[] | undefined)[] | undefined,
    readonly held: Holdings,
  ) {}
}

export type Validated = IngestRequest;
export type Limited = Validated & { readonly limit: WindowStatus };
export type Deduplicated = Limited & { readonly seen: Seen };
export type Screened = Deduplicated & { readonly unsuppressed: readonly number[] };
export type Reserved = Screened & { readonly quota: QuotaReservation; readonly admitted: readonly number[]; readonly ids: readonly string[] };
export type Classified = Reserved & { readonly classified: readonly ClassifiedEvent[] };
export type Enriched = Classified & { readonly enriched: readonly EnrichedEvent[] };
export type LookedUp = Enriched & { readonly models: ModelsInForce };
export type Detected = LookedUp & { readonly detected: readonly DetectedEvent[]; readonly detectorWrites: readonly (readonly AlertWrite[])[] };
export type Modelled = Detected & { readonly modelled: readonly DetectedEvent[] };
export type Scored = Modelled & { readonly scored: readonly ScoredEvent[] };
