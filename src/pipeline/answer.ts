import type { AccountContext } from '../event/account.js';
import type { ScoredEvent } from '../event/types.js';
import type { NewEventRow } from '../storage/types.js';
import { eventSearchText } from '../storage/search-text.js';
import { isoTime } from '../util/iso-time.js';
import { flatten } from '../util/flatten.js';
import { jsonLeaf, jsonString, rememberJson, rememberedJson } from '../util/json-text.js';
import { snakeCase } from '../util/snake-case.js';
import type { Enrichment } from '../event/enrichment.js';
import type { FieldWarning } from './unknown-fields.js';

/** The 202 answer for one event. */
export type EventResult =
  | {
      readonly id: string;
      readonly status: 'accepted';
      readonly received_at: string;
      readonly risk: ScoredEvent['risk'];
      readonly tags: readonly string[];
      readonly alerts: readonly { readonly id: string; readonly type: string; readonly severity: string }[];
      /** Present when shared state (Redis) was unreachable: limits and detection used this instance's local state. */
      readonly degraded?: true;
    }
  | { readonly status: 'dropped' }
  | ConflictResult;

/** The same event_id was first used with another payload: in a batch, this event's answer; alone, a 409. */
export type ConflictResult = {
  readonly status: 'rejected';
  readonly error: 'IDEMPOTENCY_CONFLICT';
  readonly message: string;
};

const NO_TAGS: readonly string[] = Object.freeze([]);
const NO_ALERTS: readonly never[] = Object.freeze([]);
/** Inferred types as `inferred:<type>`, then the tags of custom threat models that fired. */
function tagsOf(event: ScoredEvent): readonly string[] {
  const inferred = event.classification.inferred;
  let tags: string[] | undefined;
  for (const alert of event.alerts) {
    if (alert.tags === undefined) continue;
    for (const tag of alert.tags) {
      tags ??= inferred.map((t) => `inferred:${t}`);
      if (!tags.includes(tag)) tags.push(tag);
    }
  }
  if (tags !== undefined) return tags;
  return inferred.length === 0 ? NO_TAGS : inferred.map((t) => `inferred:${t}`);
}

/** The catalog hands out one family set per combination: its JSON text is made once, not per event. */
const familyTexts = new WeakMap<ReadonlySet<string>, string>();
function familiesJson(families: ReadonlySet<string>): string {
  let text = familyTexts.get(families);
  if (text === undefined) {
    text = JSON.stringify([...families]);
    familyTexts.set(families, text);
  }
  return text;
}

/** `,"name":<value>` as JSON.stringify writes a member, or nothing for an undefined value. */
function member(name: string, value: unknown): string {
  if (value === undefined) return '';
  return `,"${name}":${jsonLeaf(value) ?? JSON.stringify(value)}`;
}

/** JSON text of an object, with no call for the usual empty one. */
function objectJson(value: object): string {
  for (const key in value) if (Object.hasOwn(value, key)) return JSON.stringify(value);
  return '{}';
}

export type AcceptedResult = Extract<EventResult, { status: 'accepted' }>;

/**
 * The result in the key order Fastify's serializer (fast-json-stringify) writes for
 * EventResultSchema: required keys first, then the schema's order (the risk from compositeRisk
 * is in RiskSchema's order too), so JSON.stringify of it is
 * the 202 text: made here once, it is both the idempotency row's response and the reply body.
 */
export function toEventResult(event: ScoredEvent, degraded = false): AcceptedResult {
  const result: { -readonly [K in keyof AcceptedResult]: AcceptedResult[K] } = {
    status: 'accepted',
    id: event.id,
    received_at: isoTime(event.receivedAt),
    risk: event.risk,
    tags: tagsOf(event),
    alerts: event.alerts.length === 0 ? NO_ALERTS : event.alerts.map((a) => ({ id: a.id, type: a.type, severity: a.severity })),
  };
  if (degraded) result.degraded = true;
  rememberJson(result, JSON.stringify(result));
  return result;
}

/**
 * The 202 text of one result, as the response schema would serialise it: remembered for a result
 * made by toEventResult; a replayed one (parsed from an idempotency row, possibly written in another
 * key order) or a dropped one is first rebuilt in schema order.
 */
export function eventResultJson(result: EventResult): string {
  return rememberedJson(result) ?? JSON.stringify(inSchemaOrder(result));
}

function inSchemaOrder(r: EventResult): EventResult {
  if (r.status === 'rejected') return { status: r.status, error: r.error, message: r.message };
  if (r.status !== 'accepted') return { status: r.status };
  const { score, level, action, breakdown } = r.risk;
  return {
    status: r.status,
    id: r.id,
    received_at: r.received_at,
    risk: { score, level, action, breakdown: breakdown.map(({ source, points }) => ({ source, points })) },
    tags: r.tags,
    alerts: r.alerts.map(({ id, type, severity }) => ({ id, type, severity })),
    ...(r.degraded !== undefined ? { degraded: r.degraded } : {}),
  };
}

/**
 * The 202 text of one event with its warnings last, as EventResultSchema orders them. Warnings
 * belong to the request that sent the fields, so a replayed result gets those of the replay.
 */
export function answerJson(result: EventResult, warnings: readonly FieldWarning[] | undefined): string {
  const json = eventResultJson(result);
  return warnings === undefined || warnings.length === 0 ? json : `${json.slice(0, -1)},"warnings":${JSON.stringify(warnings)}}`;
}

/** The 202 body of a batch, in BatchResultSchema's key order; warnings by request index. */
export function batchResultJson(results: readonly EventResult[], warnings?: readonly (readonly FieldWarning[] | undefined)[]): string {
  let accepted = 0;
  let list = '';
  for (const [i, result] of results.entries()) {
    if (result.status === 'accepted') accepted++;
    list += (list === '' ? '' : ',') + answerJson(result, warnings?.[i]);
  }
  return `{"status":"accepted","accepted":${accepted},"results":[${list}]}`;
}

/**
 * JSON.stringify(snakeCaseKeys(value)), written member by member (see toEventRow), for values
 * whose member names stay distinct in snake_case (Vigil's own documents): the enrichment parts
 * made per event (the address, the email) are small objects of strings.
 */
export function snakeJson(value: unknown): string {
  const leaf = jsonLeaf(value);
  if (leaf !== undefined) return leaf;
  if (Array.isArray(value)) {
    let text = '';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + snakeJson(value[i]);
    return `[${text}]`;
  }
  const record: Readonly<Record<string, unknown>> = Object(value);
  let text = '';
  for (const key in record) {
    const member = record[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    text += `${text === '' ? '' : ','}${jsonString(snakeCase(key))}:${snakeJson(member)}`;
  }
  return `{${text}}`;
}

/**
 * Shared enrichment parts: cached lookups (GeoIP, ASN, feeds, user agents) hand one frozen part
 * to many events, so its text is made once, flat, and pasted into each event's document: the
 * document is flattened when it crosses to the writer thread, and a part kept as the tree of its
 * concatenations would be walked again for every event.
 */
const snakePartTexts = new WeakMap<object, string>();

function snakePartJson(part: unknown): string {
  if (part === null || typeof part !== 'object' || !Object.isFrozen(part)) return snakeJson(part);
  let text = snakePartTexts.get(part);
  if (text === undefined) {
    text = flatten(snakeJson(part));
    snakePartTexts.set(part, text);
  }
  return text;
}

/** JSON.stringify(snakeCaseKeys(enrichment)), with each shared part's text made once. */
export function snakeEnrichmentJson(enrichment: Enrichment): string {
  let text = '';
  for (const key in enrichment) {
    const value: unknown = enrichment[key as keyof Enrichment];
    if (value === undefined) continue;
    // Member names are Vigil's own identifiers: nothing in them needs escaping.
    text += `${text === '' ? '{' : ','}"${snakeCase(key)}":${snakePartJson(value)}`;
  }
  return text === '' ? '{}' : `${text}}`;
}

/** Where the members the document shares with the 202 answer start in its text (see toEventRow). */
const RISK_MEMBER = ',"risk":';

/**
 * The persisted document: what the event said, what Vigil added; never the password hash. Its
 * text is written here, once: the writer thread gets a string (a structured clone of a string is
 * a copy). The document ends with the answer's last members (risk, tags, alerts, degraded) in the
 * answer's order, so that part is the answer's own text; the enrichment's shared parts are
 * pasted from their cached text.
 */
export function toEventRow(event: ScoredEvent, ctx: AccountContext, result: AcceptedResult): NewEventRow {
  // Written member by member, in the order and text of one JSON.stringify of the document: on
  // Node 20 that call costs more than writing the members. The id is Vigil's own text.
  const { classification } = event;
  const head =
    `{"id":"${event.id}","event":${jsonString(event.type)}${member('event_id', event.eventId)}` +
    `,"timestamp":"${isoTime(event.occurredAt)}","received_at":"${result.received_at}"` +
    `${member('actor_id', event.actorId)}${member('email', event.email)}${member('ip', event.ip)}${member('user_agent', event.userAgent)}` +
    `${member('session_id', event.sessionId)}${member('host', event.host)}${member('request', event.request)},"metadata":${objectJson(event.metadata)}` +
    `,"classification":{"predefined":${classification.predefined},"base_score":${classification.baseScore},"families":${familiesJson(classification.families)}}`;
  const answer = eventResultJson(result);
  return {
    id: event.id,
    accountId: ctx.account.id,
    type: event.type,
    eventId: event.eventId ?? null,
    occurredAt: event.occurredAt,
    receivedAt: event.receivedAt,
    actorId: event.actorId ?? null,
    ip: event.ip ?? null,
    riskScore: event.risk.score,
    tags: result.tags,
    // The answer's id and received_at (an id and an ISO time) cannot hold RISK_MEMBER's text, so
    // its first match is the member itself.
    docJson: `${head},"enrichment":${snakeEnrichmentJson(event.enrichment)}${answer.slice(answer.indexOf(RISK_MEMBER))}`,
    searchText: eventSearchText({
      event: event.type,
      event_id: event.eventId,
      actor_id: event.actorId,
      email: event.email,
      ip: event.ip,
      user_agent: event.userAgent,
      session_id: event.sessionId,
      host: event.host,
      request: event.request,
      metadata: event.metadata,
    }),
  };
}
