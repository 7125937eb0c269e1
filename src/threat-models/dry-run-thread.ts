/**
 * The dry-run thread: evaluates one model over the rows the request thread read for it, so a
 * heavy model over thousands of events never holds up the event loop that serves every account.
 *
 * The thread says `ready` once its modules are loaded. Messages in, per run: `start` (the model's definition, compiled here with the request thread's
 * compile function), `rows` (one per page read), then `evaluate` (the deadline). Messages out:
 * `progress` every few events or milliseconds and one `done`, each a plain object holding the
 * counts and lists so far, so a thread stopped from outside still leaves the last of them behind.
 */
import { deserialize, serialize } from 'node:v8';
import { parentPort, type MessagePort } from 'node:worker_threads';
import { MemoryStateStore, type StateDump } from '../detection/state/memory-state-store.js';
import { nameThread } from '../storage/thread-name.js';
import type { Clock } from '../util/clock.js';
import { errorMessage } from '../util/caught.js';
import { compileModel, stepMatches, type CompiledModel } from './compile.js';
import { evaluateModels } from './evaluate.js';
import { EventView } from './event-view.js';
import type { ThreatModelDefinition } from './model.js';

/** A stored event as the thread needs it: what the model reads and what the answer lists. */
export interface DryRunRow {
  readonly id: string;
  readonly type: string;
  readonly occurredAt: number;
  readonly actorId: string | null;
  readonly ip: string | null;
  readonly doc: Readonly<Record<string, unknown>>;
}

export interface DryRunEventView {
  readonly id: string;
  readonly event: string;
  readonly timestamp: string;
  readonly actor_id: string | null;
  readonly ip: string | null;
}

export interface DryRunAlertView {
  readonly type: string;
  readonly severity: string;
  readonly subject: string;
  readonly count: number;
  readonly first_seen: string;
  readonly last_seen: string;
  readonly event_ids: readonly string[];
}

export type DryRunRequest =
  | {
      readonly kind: 'start';
      readonly accountId: string;
      readonly model: { readonly id: string; readonly version: number; readonly definition: ThreatModelDefinition };
      /** The request thread's clock when the run started (alert ids and state ages count from it). */
      readonly now: number;
      /** Matched events and alerts listed in the answer. */
      readonly listed: number;
      /** The state the run's previous page left (serialized StateDump); none on a first page. */
      readonly state?: Uint8Array;
    }
  | { readonly kind: 'rows'; readonly rows: readonly DryRunRow[] }
  | {
      readonly kind: 'evaluate';
      /** Wall time (`performance.timeOrigin + performance.now()`, the same instant on every thread) at which evaluation stops. */
      readonly deadline: number;
      /** A progress message after this many evaluated events, or after this long (ms), whichever comes first. */
      readonly progressEvents: number;
      readonly progressMs: number;
      /** More of the range follows these rows: the answer carries the state for the next page. */
      readonly more: boolean;
    };

/** What has been evaluated so far, in event-time order from the range's oldest event. */
export interface DryRunTally {
  readonly evaluated: number;
  readonly matched: number;
  readonly alerts_raised: number;
  readonly events: readonly DryRunEventView[];
  readonly alerts: readonly DryRunAlertView[];
}

export type DryRunReply =
  /** Once, when the thread has loaded its modules and takes runs. */
  | { readonly kind: 'ready' }
  | ({ readonly kind: 'progress' } & DryRunTally)
  /**
   * `stopped`: 'time' when the deadline came before the last event, else null. `state`: the
   * serialized state for the next page, when one follows; null when it outgrew STATE_MAX_BYTES.
   */
  | ({ readonly kind: 'done'; readonly stopped: 'time' | null; readonly state?: Uint8Array | null } & DryRunTally)
  | { readonly kind: 'failed'; readonly message: string };

/** The same instant on every thread: each thread's `performance.now()` counts from its own origin. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

interface Run {
  readonly accountId: string;
  readonly model: CompiledModel;
  readonly clock: Clock;
  readonly listed: number;
  readonly rows: DryRunRow[];
  readonly state: Uint8Array | undefined;
}

/**
 * A run's state between pages is bounded: the store evicts the records written longest ago past
 * STATE_BYTES (its estimate, as the service's own store does under its bound), and a serialized
 * state past STATE_MAX_BYTES is not kept at all (the run cannot go on).
 */
export const STATE_BYTES = 16 * 1024 * 1024;
export const STATE_MAX_BYTES = 32 * 1024 * 1024;

class Tally {
  evaluated = 0;
  matched = 0;
  private readonly events: DryRunEventView[] = [];
  /** Every alert the page raised or added to, by id: a later sighting updates its count and times in place. */
  private readonly alerts = new Map<string, DryRunAlertView>();
  /** The alerts opened on this page (the others were opened by an earlier page of the run). */
  private readonly opened = new Set<string>();

  constructor(private readonly listed: number) {}

  match(row: DryRunRow): void {
    this.matched++;
    if (this.events.length < this.listed)
      this.events.push({ id: row.id, event: row.type, timestamp: new Date(row.occurredAt).toISOString(), actor_id: row.actorId, ip: row.ip });
  }

  alert(view: DryRunAlertView & { readonly id: string }, opened: boolean): void {
    const { id, ...rest } = view;
    this.alerts.set(id, rest);
    if (opened) this.opened.add(id);
  }

  snapshot(): DryRunTally {
    const alerts: DryRunAlertView[] = [];
    for (const a of this.alerts.values()) {
      if (alerts.length >= this.listed) break;
      alerts.push(a);
    }
    return { evaluated: this.evaluated, matched: this.matched, alerts_raised: this.opened.size, events: [...this.events], alerts };
  }
}

async function evaluate(port: MessagePort, run: Run, request: Extract<DryRunRequest, { kind: 'evaluate' }>): Promise<void> {
  const { model, rows } = run;
  // Windows and sequences run in event time, oldest first.
  rows.sort((a, b) => a.occurredAt - b.occurredAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const models = [model];
  const tally = new Tally(run.listed);
  const state = new MemoryStateStore({ clock: run.clock, sweepIntervalMs: 0, maxBytes: STATE_BYTES });
  if (run.state !== undefined) state.restore(deserialize(run.state) as StateDump);
  /** The state for the next page, when there is one. */
  const carried = (more: boolean): { state?: Uint8Array | null } => {
    if (!more) return {};
    const bytes = serialize(state.dump());
    return { state: bytes.length > STATE_MAX_BYTES ? null : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) };
  };
  let lastPost = wallNow();
  try {
    for (const row of rows) {
      // Between events: one event's evaluation is the unit the deadline cannot cut. The first
      // event is evaluated whatever the time, so each page of a run moves it on.
      if (tally.evaluated > 0 && wallNow() >= request.deadline) {
        port.postMessage({ kind: 'done', stopped: 'time', ...tally.snapshot(), ...carried(true) } satisfies DryRunReply);
        return;
      }
      const view = EventView.ofDoc(row.type, row.occurredAt, row.doc);
      // As the evaluator decides: every step is tested, and an event whose work budget ran out
      // matches nothing. An event no step matches queues no state op and raises nothing, so the
      // evaluator is skipped for it.
      let matches = false;
      for (const step of model.steps) if (stepMatches(step, view)) matches = true;
      if (matches && !view.meter.exhausted) {
        tally.match(row);
        const [detection] = await evaluateModels(state, run.clock, run.accountId, models, [{ view, eventId: row.id }]);
        for (const w of detection?.writes ?? [])
          tally.alert(
            {
              id: w.alert.id,
              type: w.alert.type,
              severity: w.alert.severity,
              subject: w.alert.subject,
              count: w.alert.count,
              first_seen: new Date(w.alert.firstSeen).toISOString(),
              last_seen: new Date(w.alert.lastSeen).toISOString(),
              event_ids: w.alert.eventIds,
            },
            w.opened,
          );
      }
      tally.evaluated++;
      const now = wallNow();
      if (tally.evaluated % request.progressEvents === 0 || now - lastPost >= request.progressMs) {
        port.postMessage({ kind: 'progress', ...tally.snapshot() } satisfies DryRunReply);
        lastPost = now;
      }
    }
    port.postMessage({ kind: 'done', stopped: null, ...tally.snapshot(), ...carried(request.more) } satisfies DryRunReply);
  } finally {
    await state.close();
  }
}

const port = parentPort;
if (port) {
  nameThread('vigil-dryrun');
  let run: Run | undefined;
  const fail = (err: unknown) => port.postMessage({ kind: 'failed', message: errorMessage(err) } satisfies DryRunReply);
  port.on('message', (request: DryRunRequest) => {
    try {
      switch (request.kind) {
        case 'start': {
          const startedAt = performance.now();
          const clock: Clock = { now: () => request.now + Math.floor(performance.now() - startedAt) };
          const { id, version, definition } = request.model;
          run = { accountId: request.accountId, model: compileModel(id, version, definition), clock, listed: request.listed, rows: [], state: request.state };
          break;
        }
        case 'rows':
          if (run) for (const row of request.rows) run.rows.push(row);
          break;
        case 'evaluate':
          if (!run) throw new Error('evaluate before start');
          evaluate(port, run, request).catch(fail);
          run = undefined;
          break;
      }
    } catch (err) {
      fail(err);
    }
  });
  port.postMessage({ kind: 'ready' } satisfies DryRunReply);
}
