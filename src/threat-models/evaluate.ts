/**
 * Runs an account's compiled models over a request's events against the detectors' state store,
 * in two batches for the whole request whatever its size (one round trip each on Redis):
 *   1. the window, distinct and sequence ops of every (event, model) that matched, in event
 *      order, so a later event of the request sees the earlier ones;
 *   2. alert deduplication (`alert.open`, the built-in alerts' record) for every model that fired.
 * State keys are `<scope>|tm|<model id>|<version>|<kind>|<group>`: a new version starts with
 * empty windows, and another account's models can never reach them.
 */
import { scopedKey, type AccountScope } from '../event/tenancy.js';
import { alertStateKey } from '../detection/engine.js';
import { primarySubject } from '../detection/facts.js';
import type { AlertHit } from '../event/alert.js';
import type { AlertOpenOp, AlertOpenResult, StateOp, StateResult, StateStore } from '../detection/state/state-store.js';
import type { AlertWrite } from '../storage/types.js';
import { newId } from '../util/ids.js';
import type { Clock } from '../util/clock.js';
import { EVALUATION_BUDGET, type WorkMeter } from './budget.js';
import { stepMatches, type CompiledModel } from './compile.js';
import type { EventView } from './event-view.js';

export const THREAT_MODEL_DETECTOR = 'threat_model';

export interface ModelInput {
  readonly view: EventView;
  readonly eventId?: string;
}

export interface ModelDetection {
  readonly alerts: readonly AlertHit[];
  readonly writes: readonly AlertWrite[];
}

const NOTHING: ModelDetection = Object.freeze({ alerts: Object.freeze([]) as readonly AlertHit[], writes: Object.freeze([]) as readonly AlertWrite[] });

const SUBJECT_PREFIX: Readonly<Record<string, string>> = { actor_id: 'actor', ip: 'ip', host: 'host', email: 'email', session_id: 'session' };

interface Pending {
  readonly event: number;
  readonly model: CompiledModel;
  readonly group: string | undefined;
  readonly groupValues: Readonly<Record<string, string>>;
  /** Index of the op whose answer decides; -1 when the match alone fires. */
  readonly slot: number;
}

interface Fired {
  readonly event: number;
  readonly model: CompiledModel;
  readonly subject: string;
  readonly groupValues: Readonly<Record<string, string>>;
  readonly slot: number;
}

function groupOf(model: CompiledModel, view: EventView): { key: string; values: Record<string, string> } | undefined {
  if (model.groupBy.length === 0) return NO_GROUP;
  const values: Record<string, string> = {};
  let key = '';
  for (const field of model.groupBy) {
    const v = view.get(field);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return undefined;
    const text = String(v);
    if (text === '') return undefined;
    values[field] = text;
    // One field: its value is the key; several: JSON keeps them apart whatever they contain.
    key = model.groupBy.length === 1 ? text : key === '' ? JSON.stringify([text]) : `${key.slice(0, -1)},${JSON.stringify(text)}]`;
  }
  return { key, values };
}

const NO_GROUP = Object.freeze({ key: '*', values: Object.freeze({}) as Record<string, string> });

function subjectOf(model: CompiledModel, view: EventView, values: Readonly<Record<string, string>>, accountId: string): string {
  if (model.groupBy.length === 1) {
    const field = model.groupBy[0] as string;
    return `${SUBJECT_PREFIX[field] ?? field}:${values[field]}`;
  }
  if (model.groupBy.length > 1) return model.groupBy.map((f) => `${f}=${values[f]}`).join(',');
  const str = (p: string) => {
    const v = view.get(p);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  return primarySubject({ actor: str('actor_id'), ip: str('ip'), host: str('host'), accountId });
}

/** The models whose event globs can match one event type. */
interface TypeEntry {
  readonly models: readonly CompiledModel[];
  /** Work the type tests took (globs beyond exact names and prefixes): every event of the type pays it. */
  readonly steps: number;
  /** The model whose type tests took most of it, and how much. */
  readonly heaviest: CompiledModel | undefined;
  readonly heaviestSteps: number;
}

/**
 * Per model list (one per compiled set of an account), the models whose event globs can match a
 * type: an event only meets the models that may fire on it. Bounded, since types are open-ended.
 */
const typeIndexes = new WeakMap<readonly CompiledModel[], Map<string, TypeEntry>>();
const TYPES_INDEXED = 1_000;

function typeIndexOf(models: readonly CompiledModel[]): Map<string, TypeEntry> {
  let index = typeIndexes.get(models);
  if (index === undefined) {
    index = new Map();
    typeIndexes.set(models, index);
  }
  return index;
}

/**
 * The models that may fire on the event's type, their type tests charged to its meter whether the
 * list was indexed already or not, so that an event's budget never depends on what came before it.
 */
function modelsFor(index: Map<string, TypeEntry>, models: readonly CompiledModel[], type: string, meter: WorkMeter): TypeEntry {
  const known = index.get(type);
  if (known !== undefined) {
    if (known.steps > 0) meter.spend(known.steps);
    return known;
  }
  const list: CompiledModel[] = [];
  const before = meter.asked;
  let heaviest: CompiledModel | undefined;
  let heaviestSteps = 0;
  for (const model of models) {
    const asked = meter.asked;
    if (model.steps.some((s) => s.type(type, meter))) list.push(model);
    if (meter.asked - asked >= heaviestSteps && meter.asked > asked) {
      heaviest = model;
      heaviestSteps = meter.asked - asked;
    }
    if (meter.exhausted) break;
  }
  const entry: TypeEntry = { models: list, steps: meter.asked - before, heaviest, heaviestSteps };
  if (!meter.exhausted && index.size < TYPES_INDEXED) index.set(type, entry);
  return entry;
}

const run = (state: StateStore, ops: readonly StateOp[]): StateResult[] | Promise<StateResult[]> =>
  ops.length === 0 ? [] : state.runSync ? state.runSync(ops) : (state.run(ops) as Promise<StateResult[]>);

/** Queues one (event, model) pair's state ops; answers the pending decision, or undefined when it cannot fire. */
function queue(ops: StateOp[], scope: AccountScope, model: CompiledModel, view: EventView, event: number, eventId: string | undefined): Pending | undefined {
  const matched: number[] = [];
  for (let s = 0; s < model.steps.length; s++) if (stepMatches(model.steps[s] as (typeof model.steps)[number], view)) matched.push(s);
  // A model whose tests the budget cut short has no answer (a refused test inside a `not` would
  // otherwise read as a match): it neither fires nor records a step.
  if (matched.length === 0 || view.meter.exhausted) return undefined;
  const group = groupOf(model, view);
  if (group === undefined) return undefined;
  const key = (kind: string) => scopedKey(scope, 'tm', model.id, String(model.version), kind, group.key);
  const pending = (slot: number): Pending => ({ event, model, group: group.key, groupValues: group.values, slot });
  switch (model.kind) {
    case 'single':
      return pending(-1);
    case 'count':
      ops.push({ kind: 'window.add', key: key('n'), field: 'c', at: view.at, windowMs: model.windowMs, maxEntries: model.count });
      return pending(ops.length - 1);
    case 'distinct': {
      const value = view.get(model.distinct as string);
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
      ops.push({ kind: 'distinct.add', key: key('d'), field: 'v', at: view.at, windowMs: model.windowMs, member: String(value), maxMembers: model.count });
      return pending(ops.length - 1);
    }
    case 'unordered':
      for (const s of matched)
        ops.push({ kind: 'distinct.add', key: key('u'), field: 's', at: view.at, windowMs: model.windowMs, member: String(s), maxMembers: model.steps.length });
      return pending(ops.length - 1);
    case 'sequence':
      // Steps are ordered by event time, not arrival: a late first step completes the chain its
      // later steps began, and the event serves as one of the stages it meets.
      ops.push({
        kind: 'ordered.add',
        key: key('o'),
        field: 's',
        at: view.at,
        stages: matched,
        stageCount: model.steps.length,
        windowMs: model.windowMs,
        ref: eventId ?? null,
      });
      return pending(ops.length - 1);
  }
}

function fires(p: Pending, answers: readonly StateResult[]): boolean {
  if (p.slot === -1) return true;
  const answer = answers[p.slot];
  if (answer === undefined) return false;
  switch (p.model.kind) {
    case 'count':
      return 'sum' in answer && answer.sum >= p.model.count;
    case 'distinct':
    case 'unordered':
      return 'distinct' in answer && answer.distinct >= p.model.count;
    case 'sequence':
      return 'steps' in answer && answer.steps !== null;
    default:
      return true;
  }
}

const yieldToOtherRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** What evaluating an account's models cost, added to by each call that is given it. */
export interface EvaluationCosts {
  /** Events evaluated. */
  events: number;
  /** Events whose work budget ran out. */
  exhausted: number;
  /** Wall time of the models' tests, in microseconds (also added to each model's usage). */
  micros: number;
}

/**
 * Evaluates `models` over `inputs` (one request's events, in order); answers one detection per
 * input. Writes only to `state`: a dry run passes a private store. Each event's evaluation starts
 * with a full work budget (budget.ts); an event that runs out of it is not matched by the model
 * that ran out nor by the models after it. The events of one request share a budget too. With
 * `costs`, the time each model takes is measured and counted, and a request whose models have run
 * for a slice lets other requests run between two of its events.
 */
export async function evaluateModels(
  state: StateStore,
  clock: Clock,
  accountId: string,
  models: readonly CompiledModel[],
  inputs: readonly ModelInput[],
  costs?: EvaluationCosts,
): Promise<ModelDetection[]> {
  if (models.length === 0) return inputs.map(() => NOTHING);
  const byType = typeIndexOf(models);
  const scope = state.scope(accountId);
  const ops: StateOp[] = [];
  const pending: Pending[] = [];
  let requestLeft = EVALUATION_BUDGET.requestSteps;
  let sliceStarted = costs === undefined ? 0 : performance.now();
  for (let e = 0; e < inputs.length; e++) {
    let started = costs === undefined ? 0 : performance.now();
    // A request whose models have held the thread for a slice lets other requests run before its
    // next event: one account's heavy batch delays another's request by a slice, not by the batch.
    if (costs !== undefined && e > 0 && started - sliceStarted > EVALUATION_BUDGET.sliceMs) {
      await yieldToOtherRequests();
      started = sliceStarted = performance.now();
    }
    const { view, eventId } = inputs[e] as ModelInput;
    const meter = view.meter;
    meter.reset(requestLeft);
    const entry = modelsFor(byType, models, view.type, meter);
    let heaviest = entry.heaviest;
    let heaviestSteps = entry.heaviestSteps;
    if (!meter.exhausted)
      for (const model of entry.models) {
        const asked = meter.asked;
        if (model.usage.failure !== undefined) continue;
        let p: Pending | undefined;
        const queued = ops.length;
        try {
          p = queue(ops, scope, model, view, e, eventId);
        } catch (err) {
          // A model that throws fails alone: its ops are withdrawn, the other models and the
          // request go on, and the failure is kept on the model for the stage to suspend it.
          ops.length = queued;
          model.usage.failure = `${err instanceof Error ? err.message : String(err)} (on event ${eventId ?? `#${e}`})`;
        }
        if (costs !== undefined) {
          // One clock read per model: each model is charged the time since the previous read.
          const now = performance.now();
          model.usage.micros += (now - started) * 1000;
          costs.micros += (now - started) * 1000;
          started = now;
        }
        // The model that asked for most of the event's work is the one to blame; of equals, the later, which ran out.
        if (meter.asked - asked >= heaviestSteps && meter.asked > asked) {
          heaviest = model;
          heaviestSteps = meter.asked - asked;
        }
        // Out of budget: the rest of the account's models skip this event.
        if (meter.exhausted) break;
        if (p) pending.push(p);
      }
    requestLeft -= meter.granted - meter.left;
    if (meter.exhausted && heaviest !== undefined) heaviest.usage.exhausted++;
    if (costs !== undefined) {
      costs.events++;
      if (meter.exhausted) costs.exhausted++;
    }
  }
  // Ops run even when nothing can fire yet: a sequence's first step only records that it happened.
  if (ops.length === 0 && pending.length === 0) return inputs.map(() => NOTHING);
  const first = await run(state, ops);

  const openings: AlertOpenOp[] = [];
  const fired: Fired[] = [];
  const seen = new Set<string>();
  for (const p of pending) {
    if (!fires(p, first)) continue;
    const { view, eventId } = inputs[p.event] as ModelInput;
    const subject = subjectOf(p.model, view, p.groupValues, accountId);
    const type = p.model.definition.outcome.alert;
    const once = `${p.event}\u0000${type}\u0000${subject}`;
    if (seen.has(once)) continue;
    seen.add(once);
    openings.push({
      kind: 'alert.open',
      key: alertStateKey(scope, subject),
      field: type,
      at: view.at,
      id: newId('alr', clock.now()),
      windowMs: p.model.windowMs,
      ...(eventId === undefined ? {} : { eventId }),
    });
    fired.push({ event: p.event, model: p.model, subject, groupValues: p.groupValues, slot: openings.length - 1 });
  }
  if (fired.length === 0) return inputs.map(() => NOTHING);
  const second = await run(state, openings);

  const out = inputs.map(() => ({ alerts: [] as AlertHit[], writes: [] as AlertWrite[] }));
  for (const f of fired) {
    const { alert, opened } = second[f.slot] as AlertOpenResult;
    const { outcome, name } = f.model.definition;
    const actor = inputs[f.event]?.view.get('actor_id');
    const target = out[f.event] as { alerts: AlertHit[]; writes: AlertWrite[] };
    target.alerts.push({
      id: alert.id,
      type: outcome.alert,
      severity: outcome.severity,
      subject: f.subject,
      opened,
      detector: THREAT_MODEL_DETECTOR,
      points: outcome.points,
      tags: outcome.tags,
    });
    target.writes.push({
      opened,
      alert: {
        id: alert.id,
        accountId,
        type: outcome.alert,
        severity: outcome.severity,
        subject: f.subject,
        status: 'open',
        count: alert.count,
        firstSeen: alert.firstSeen,
        lastSeen: alert.lastSeen,
        actorId: typeof actor === 'string' ? actor : null,
        eventIds: alert.eventIds,
        details: {
          threat_model: { id: f.model.id, version: f.model.version, name },
          points: outcome.points,
          tags: outcome.tags,
          ...(f.model.groupBy.length > 0 ? { group: f.groupValues } : {}),
        },
      },
    });
  }
  return out;
}
