/**
 * An event as threat models see it: the field names of the stored document (`actor_id`,
 * `request.path`, `metadata.*`, `enrichment.*`), whether the event is being ingested or read back
 * from storage for a dry run, so one model gives the same answer on both.
 */
import type { EnrichedEvent } from '../event/types.js';
import { snakeCase, snakeCaseKeys } from '../util/snake-case.js';
import { WorkMeter } from './budget.js';

type Doc = Readonly<Record<string, unknown>>;

const own = (obj: object, key: string): unknown => (Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined);

/** A field path split once: its segments, and from each segment on, the rest joined back with dots. */
interface Path {
  readonly segments: readonly string[];
  readonly rests: readonly string[];
}

/**
 * Reads `a.b.c`: at each level a key holding the dots literally (`metadata["process.name"]`)
 * wins over walking into nested objects, since senders use both shapes.
 */
function walk(value: unknown, path: Path, from: number): unknown {
  if (from === path.segments.length) return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if (path.segments.length - from > 1) {
    const literal = own(value, path.rests[from] as string);
    if (literal !== undefined) return literal;
  }
  return walk(own(value, path.segments[from] as string), path, from + 1);
}

const pathCache = new Map<string, Path>();
function pathOf(text: string): Path {
  let p = pathCache.get(text);
  if (p === undefined) {
    // Enrichment members are snake_case; models written with the older camelCase names still match.
    const split = text.split('.');
    const segments = split[0] === 'enrichment' ? split.map(snakeCase) : split;
    p = { segments, rests: segments.map((_, i) => segments.slice(i).join('.')) };
    if (pathCache.size < 10_000) pathCache.set(text, p);
  }
  return p;
}

function collect(value: unknown, out: string[], depth: number): void {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value));
  else if (depth < 8 && value !== null && typeof value === 'object') for (const v of Object.values(value)) collect(v, out, depth + 1);
}

export class EventView {
  private keywords: string[] | undefined;
  /** The work budget of evaluating one account's models over this event; the compiled tests charge it. */
  readonly meter = new WorkMeter();

  constructor(
    readonly type: string,
    /** Event time (ms). */
    readonly at: number,
    private readonly doc: Doc,
  ) {}

  get(path: string): unknown {
    if (path === 'request.url' || path === 'request.extension') return this.derived(path);
    return walk(this.doc, pathOf(path), 0);
  }

  /** The request fields read from path and query rather than sent. */
  private derived(path: 'request.url' | 'request.extension'): string | undefined {
    const request = own(this.doc, 'request') as Record<string, unknown> | undefined;
    const p = request === undefined || request === null || typeof request !== 'object' ? undefined : own(request, 'path');
    if (typeof p !== 'string') return undefined;
    if (path === 'request.extension') {
      const segment = p.slice(p.lastIndexOf('/') + 1);
      const dot = segment.lastIndexOf('.');
      return dot <= 0 || dot === segment.length - 1 ? undefined : segment.slice(dot + 1).toLowerCase();
    }
    const query = own(request as object, 'query');
    return typeof query === 'string' && query !== '' ? `${p}?${query}` : p;
  }

  /** Every string (and number) the sender gave, for keyword conditions; enrichment is Vigil's, not the sender's. */
  keywordValues(): readonly string[] {
    if (this.keywords === undefined) {
      const out: string[] = [];
      for (const [key, value] of Object.entries(this.doc)) if (key !== 'enrichment') collect(value, out, 0);
      this.keywords = out;
    }
    return this.keywords;
  }

  static ofEvent(e: EnrichedEvent): EventView {
    return new EventView(e.type, e.occurredAt, {
      event: e.type,
      event_id: e.eventId,
      actor_id: e.actorId,
      email: e.email,
      ip: e.ip,
      user_agent: e.userAgent,
      session_id: e.sessionId,
      host: e.host,
      request: e.request,
      metadata: e.metadata,
      enrichment: snakeCaseKeys(e.enrichment),
    });
  }

  /** A stored document (EventRow.doc). */
  static ofDoc(type: string, at: number, doc: Doc): EventView {
    // Events stored by earlier versions hold their enrichment in camelCase.
    return new EventView(type, at, doc.enrichment === undefined ? doc : Object.assign({}, doc, { enrichment: snakeCaseKeys(doc.enrichment) }));
  }
}
