/**
 * Standing alerts: while a behavioural high or critical alert is open, the later events of the
 * actor and of the session that raised it are challenged. Each subject keeps one marker holding
 * the latest time until which such an alert stands, read with the event's first batch and
 * written, when the event raised a carrying alert, with its alert updates.
 */
import type { StandingAlert } from '../event/alert.js';
import { type Answers, type DetectContext, type OpBatch, type Raised, type Slot } from './detector.js';
import { alertSpec } from './specs.js';
import type { LastResult, StateStore } from './state/state-store.js';
import { scopedKey } from '../event/tenancy.js';
import { HOUR_MS } from '../util/duration.js';

/** Longer than any alert window, so a marker outlives what it records. */
const MARKER_TTL_MS = 3 * HOUR_MS;
const FIELD = 'standing';

interface Marker {
  readonly until: number;
  readonly type: string;
}

function markerOf(result: LastResult): { at: number; marker: Marker } | undefined {
  const prev = result.previous;
  if (prev === null || typeof prev.value !== 'object' || prev.value === null || Array.isArray(prev.value)) return undefined;
  const { until, type } = prev.value as { until?: unknown; type?: unknown };
  return typeof until === 'number' && typeof type === 'string' ? { at: prev.at, marker: { until, type } } : undefined;
}

/** A subject's marker read with the first batch, and what this event knows of it since. */
interface Read {
  readonly subject: string;
  readonly slot: Slot<LastResult>;
  known: Marker | undefined;
}

export class Standing {
  private readonly reads: Read[] = [];

  constructor(private readonly ctx: DetectContext) {
    const f = ctx.facts;
    if (f.actor !== undefined) this.readMarker(f.actorSubject);
    if (f.session !== undefined) this.readMarker(`session:${f.session}`);
  }

  private readMarker(subject: string): void {
    const { ctx } = this;
    const slot = ctx.ops.add({ kind: 'last.swap', key: ctx.key('standing', subject), field: FIELD, at: ctx.facts.at, ttlMs: MARKER_TTL_MS });
    this.reads.push({ subject, slot, known: undefined });
  }

  /** The alert that stands over this event, from the first batch's answers. */
  read(answers: Answers): StandingAlert | undefined {
    const at = this.ctx.facts.at;
    let best: StandingAlert | undefined;
    for (const read of this.reads) {
      const found = markerOf(answers.get(read.slot));
      if (found === undefined) continue;
      read.known = found.marker;
      const subject = read.subject;
      // A marker written by a later event (delivered first) says nothing about this one.
      if (found.at > at || found.marker.until < at) continue;
      if (best === undefined || found.marker.until > best.until) best = { type: found.marker.type, via: subject, until: found.marker.until };
    }
    return best;
  }

  /** Queues the markers for the carrying alerts among `raised` (from index `from`). */
  write(batch: OpBatch, raised: readonly Raised[], from: number): void {
    const f = this.ctx.facts;
    let strongest: Marker | undefined;
    for (let i = from; i < raised.length; i++) {
      const spec = alertSpec((raised[i] as Raised).type);
      if (spec.carries !== true) continue;
      const until = f.at + (spec.windowMs ?? HOUR_MS);
      if (strongest === undefined || until > strongest.until) strongest = { until, type: spec.type };
    }
    if (strongest === undefined) return;
    for (const read of this.reads) {
      const before = read.known;
      const value = before !== undefined && before.until > strongest.until ? before : strongest;
      read.known = value;
      batch.add({
        kind: 'last.swap',
        key: this.ctx.key('standing', read.subject),
        field: FIELD,
        at: f.at,
        value: { until: value.until, type: value.type },
        ttlMs: MARKER_TTL_MS,
      });
    }
  }
}

/**
 * Lifts the standing of an alert an analyst closed (resolved or false positive): the marker of
 * the alert's own subject (an actor or a session), when that alert type set it. A marker of
 * another alert on the same subject stays, and so does the marker the same event left on its
 * session, which runs out with the alert's window.
 */
export async function liftStanding(state: StateStore, accountId: string, type: string, subject: string, at: number): Promise<void> {
  if (!subject.startsWith('actor:') && !subject.startsWith('session:')) return;
  const key = scopedKey(state.scope(accountId), 'standing', subject);
  const [read] = await state.run([{ kind: 'last.swap', key, field: FIELD, at, ttlMs: MARKER_TTL_MS }] as const);
  if (markerOf(read)?.marker.type === type) await state.run([{ kind: 'delete', key, field: FIELD }] as const);
}
