/**
 * Runs the detectors the catalog named for one event against shared state, in at most three
 * batches (usually one):
 *   1. every detector's state ops, plus kill-chain stages the event type meets;
 *   2. only if something was raised or marked: alert deduplication, follow-up markers and
 *      kill-chain stages met by alerts;
 *   3. only if a chain completed in batch 2: the chain alert's deduplication.
 */
import type { AccountContext } from '../event/account.js';
import type { EnrichedEvent } from '../event/types.js';
import type { AlertWrite } from '../storage/types.js';
import { scopedKey, type AccountScope } from '../event/tenancy.js';
import { newId } from '../util/ids.js';
import type { Clock } from '../util/clock.js';
import type { AlertHit, StandingAlert } from '../event/alert.js';
import { Answers, OpBatch, type DetectContext, type Judge, type Raised, type Slot } from './detector.js';
import { DETECTORS } from './detectors/index.js';
import { eventFacts, type EventFacts } from './facts.js';
import { ChainRun, killChain } from './kill-chains.js';
import { compileSettings, isSilenced, type CompiledSettings } from './settings.js';
import { alertSpec } from './specs.js';
import { liftStanding, Standing } from './standing.js';
import type { AlertOpenResult, LastSwapOp, StateStore } from './state/state-store.js';
import { HOUR_MS } from '../util/duration.js';

/** What detection found for one event. */
export interface DetectionResult {
  readonly alerts: readonly AlertHit[];
  readonly writes: readonly AlertWrite[];
  /** An open alert of an earlier event on the same actor or session (see standing.ts). */
  readonly standing?: StandingAlert;
}

export const NO_DETECTION: DetectionResult = Object.freeze({
  alerts: Object.freeze([]) as readonly AlertHit[],
  writes: Object.freeze([]) as readonly AlertWrite[],
});
const NO_ANSWERS = new Answers([]);

/** The state record holding a subject's open alerts, under an account's key scope (StateStore.scope). */
export const alertStateKey = (scope: AccountScope, subject: string): string => scopedKey(scope, 'alerts', subject);

class EventRun implements DetectContext {
  readonly ops = new OpBatch();
  readonly after = new OpBatch<LastSwapOp>();
  readonly raised: Raised[] = [];
  private readonly prefix: string;

  constructor(
    readonly facts: EventFacts,
    readonly settings: CompiledSettings,
    private readonly scope: AccountScope,
  ) {
    this.prefix = `${scope}|`;
  }

  // Detectors of one event often address the same records: reusing the string lets the store
  // hash it once.
  private readonly keyParts: string[] = [];
  private readonly keys: string[] = [];

  key(purpose: string, subject: string): string {
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keyParts[2 * i] === purpose && this.keyParts[2 * i + 1] === subject) return this.keys[i] as string;
    }
    const key = `${this.prefix}${purpose}|${subject}`;
    this.keyParts.push(purpose, subject);
    this.keys.push(key);
    return key;
  }

  alertKey(subject: string): string {
    // The same text as alertStateKey, from the event's key cache: several detectors and the
    // standing check read one subject's alerts.
    return subject === '' ? alertStateKey(this.scope, subject) : this.key('alerts', subject);
  }

  raise(type: string, subject: string, details: Readonly<Record<string, unknown>> = {}): void {
    for (const r of this.raised) if (r.type === type && r.subject === subject) return;
    this.raised.push({ type, detector: alertSpec(type).detector, subject, details });
  }
}

interface Opening {
  readonly raised: Raised;
  readonly slot: Slot<AlertOpenResult>;
}

/** Every step after the first reads the answers to the batch it sent; a step called without them is a bug in the caller. */
function answered(answers: Answers | undefined): Answers {
  if (answers === undefined) throw new Error('detection step called without the answers to its last batch');
  return answers;
}

/** In-process stores answer synchronously; skipping the promise saves a microtask per batch on the hot path. */
function runBatch(state: StateStore, batch: OpBatch): Answers | Promise<Answers> {
  if (state.runSync) return new Answers(state.runSync(batch.ops));
  return state.run(batch.ops).then((results) => new Answers(results));
}

/**
 * One event's detection as steps, so that a caller decides when each batch is sent: `next()`
 * answers the first batch, `next(answers)` the batch that follows those answers, or undefined
 * when the event is done; then `result()`. detectEvent runs the steps one after the other;
 * pipelined-batch.ts interleaves the steps of a request's events.
 */
export class EventDetection {
  private readonly run: EventRun;
  private readonly judges: Judge[] = [];
  private readonly chains: ChainRun | undefined;
  private readonly standing: Standing;
  private standingAlert: StandingAlert | undefined;
  private step: 'first' | 'judge' | 'second' | 'third' | 'done' = 'first';
  private readonly answered: { openings: Opening[]; answers: Answers }[] = [];
  private openings: Opening[] = [];
  private output: DetectionResult = NO_DETECTION;

  /** Undefined when the catalog names no detector for the event. */
  static start(state: StateStore, clock: Clock, event: EnrichedEvent, ctx: AccountContext, eventId: string | undefined): EventDetection | undefined {
    return event.classification.detectors.length === 0 ? undefined : new EventDetection(state, clock, event, ctx, eventId);
  }

  private constructor(
    state: StateStore,
    private readonly clock: Clock,
    event: EnrichedEvent,
    ctx: AccountContext,
    eventId: string | undefined,
  ) {
    const settings = compileSettings(ctx.account.settings);
    const facts = eventFacts(event, ctx.account.id, eventId);
    const silenced = settings.silenced({
      // Allowlists name addresses and actors as the account knows them, not as minimised.
      ip: event.sent?.ip ?? facts.ip,
      asn: event.enrichment.asn?.number,
      actorId: event.sent?.actorId ?? facts.actor,
      country: facts.country,
    });
    this.run = new EventRun(facts, settings, state.scope(facts.accountId));
    let chains: ChainRun | undefined;
    const names = event.classification.detectors;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      if (!settings.enabled(name) || isSilenced(silenced, name)) continue;
      if (name === killChain.name) {
        chains = new ChainRun(this.run, killChain.thresholdsIn(settings));
        continue;
      }
      const judge = DETECTORS.get(name)?.detect(this.run, settings.thresholds(name));
      if (judge) this.judges.push(judge);
    }
    chains?.collect();
    this.chains = chains;
    this.standing = new Standing(this.run);
  }

  /** True once no batch can follow the one `next` answered last, whatever its answers. */
  get lastBatchSent(): boolean {
    return this.step === 'done' || this.step === 'third' || (this.step === 'second' && !this.chains?.mayCompleteInSecond);
  }

  next(answers?: Answers): OpBatch | undefined {
    switch (this.step) {
      case 'first':
        this.step = 'judge';
        return this.run.ops;
      case 'judge':
        return this.afterFirst(answered(answers));
      case 'second':
        return this.afterSecond(answered(answers));
      case 'third':
        this.answered.push({ openings: this.openings, answers: answered(answers) });
        return this.finish();
      case 'done':
        return undefined;
    }
  }

  result(): DetectionResult {
    return this.output;
  }

  private afterFirst(first: Answers): OpBatch | undefined {
    const { run, chains } = this;
    this.standingAlert = this.standing.read(first);
    for (const judge of this.judges) judge(first);
    chains?.complete(first, 'first');
    this.step = 'done';
    if (run.raised.length === 0 && run.after.length === 0 && chains === undefined) return this.finish();
    const second = new OpBatch();
    for (const op of run.after.ops) second.ops.push(op);
    if (chains?.needsSecondBatch(first, run.raised.length > 0)) chains.afterJudges(first, run.raised, second);
    this.openings = queueOpenings(second, run, 0, this.clock);
    this.standing.write(second, run.raised, 0);
    if (second.length === 0) return this.finish();
    this.step = 'second';
    return second;
  }

  private afterSecond(second: Answers): OpBatch | undefined {
    const { run } = this;
    const countBefore = run.raised.length;
    this.chains?.complete(second, 'second');
    this.answered.push({ openings: this.openings, answers: second });
    if (run.raised.length === countBefore) return this.finish();
    const third = new OpBatch();
    this.openings = queueOpenings(third, run, countBefore, this.clock);
    this.standing.write(third, run.raised, countBefore);
    this.step = 'third';
    return third;
  }

  private finish(): undefined {
    const result = this.answered.length === 0 ? NO_DETECTION : buildResult(this.answered, this.run.facts);
    this.output = this.standingAlert === undefined ? result : { alerts: result.alerts, writes: result.writes, standing: this.standingAlert };
    this.step = 'done';
    return undefined;
  }
}

export async function detectEvent(
  state: StateStore,
  clock: Clock,
  event: EnrichedEvent,
  ctx: AccountContext,
  eventId: string | undefined,
): Promise<DetectionResult> {
  const detection = EventDetection.start(state, clock, event, ctx, eventId);
  if (detection === undefined) return NO_DETECTION;
  let batch = detection.next();
  while (batch !== undefined) batch = detection.next(batch.length > 0 ? await runBatch(state, batch) : NO_ANSWERS);
  return detection.result();
}

function queueOpenings(batch: OpBatch, run: EventRun, from: number, clock: Clock): Opening[] {
  const out: Opening[] = [];
  const f = run.facts;
  for (let i = from; i < run.raised.length; i++) {
    const raised = run.raised[i] as Raised;
    const spec = alertSpec(raised.type);
    const slot = batch.add({
      kind: 'alert.open',
      key: run.alertKey(raised.subject),
      field: raised.type,
      at: f.at,
      id: newId('alr', clock.now()),
      windowMs: spec.windowMs ?? HOUR_MS,
      ...(f.eventId === undefined ? {} : { eventId: f.eventId }),
    });
    out.push({ raised, slot });
  }
  return out;
}

function buildResult(answered: readonly { openings: readonly Opening[]; answers: Answers }[], f: EventFacts): DetectionResult {
  const alerts: AlertHit[] = [];
  const writes: AlertWrite[] = [];
  for (const { openings, answers } of answered) {
    for (const { raised, slot } of openings) {
      const { alert, opened } = answers.get(slot);
      const spec = alertSpec(raised.type);
      alerts.push({
        id: alert.id,
        type: raised.type,
        severity: spec.severity,
        subject: raised.subject,
        opened,
        detector: raised.detector,
        ...(spec.decision === undefined ? {} : { decision: spec.decision }),
      });
      writes.push({
        opened,
        alert: {
          id: alert.id,
          accountId: f.accountId,
          type: raised.type,
          severity: spec.severity,
          subject: raised.subject,
          status: 'open',
          count: alert.count,
          firstSeen: alert.firstSeen,
          lastSeen: alert.lastSeen,
          actorId: f.actor ?? null,
          eventIds: alert.eventIds,
          details: raised.details,
        },
      });
    }
  }
  return { alerts, writes };
}

/**
 * Forgets the open-alert state of (type, subject), so the next sighting opens a new alert instead
 * of updating this one, and lifts the standing the alert put on its subject's later events. Call
 * it when an alert is resolved or marked a false positive.
 */
export async function forgetAlert(state: StateStore, accountId: string, type: string, subject: string, at: number): Promise<void> {
  await state.run([{ kind: 'delete', key: alertStateKey(state.scope(accountId), subject), field: type }]);
  await liftStanding(state, accountId, type, subject, at);
}
