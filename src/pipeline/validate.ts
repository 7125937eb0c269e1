import { hash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { DAY_MS } from '../util/duration.js';
import { formatAddress, parseAddress } from '../util/ip.js';
import { canonicalJson } from '../util/json-text.js';
import { problemsOf } from '../util/schema-check.js';
import { mismatchMessage } from '../util/schema-text.js';
import { readTime } from '../util/time-text.js';
import { MAX_ERROR_DETAILS, reject, type Rejection, type ErrorDetail } from '../event/rejection.js';
import { EVENT_TYPE_RULE, EventSchema, RequestSchema, type EventBody } from './event-schema.js';
import { familyOf, FieldSuggester, fieldWarning, MAX_FIELD_NAME_LENGTH, SuggestionBudget, type FieldWarning } from './unknown-fields.js';
import { keyMaySend, publishableFamiliesText } from '../catalog/key-kinds.js';
import type { RequestInfo, ValidatedEvent } from '../event/types.js';
import type { AccountContext } from '../event/account.js';
import type { KeyWindows } from './limit.js';
import { IngestRequest, type Received, type Validated } from './request.js';
import { Exit, type Stage } from './stage.js';

/**
 * The event schema as checked: `metadata` is only required to be an object (below). TypeBox's
 * record check tests every key against a pattern, which cost more than the rest of validation
 * together on a metadata object of a thousand keys; the structure walk visits those keys anyway.
 */
const compiled = TypeCompiler.Compile(
  Type.Object(Object.assign({}, EventSchema.properties, { metadata: Type.Optional(Type.Unknown()) }), {
    additionalProperties: EventSchema.additionalProperties,
  }),
);

const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(EventSchema.properties));
const REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(RequestSchema.properties));
const suggester = new FieldSuggester([...KNOWN_FIELDS], [...REQUEST_FIELDS]);
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_METADATA_DEPTH = 32;
const MAX_METADATA_BYTES = 16 * 1024;
const MAX_UNKNOWN_FIELDS = 100;
const FUTURE_TOLERANCE_MS = DAY_MS;
/** Earlier than this, a number is almost certainly Unix seconds sent by mistake. */
const EARLIEST_TIMESTAMP_MS = Date.UTC(2000, 0, 1);
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export type ValidationResult =
  | { readonly ok: true; readonly event: ValidatedEvent; readonly warnings?: readonly FieldWarning[] }
  | { readonly ok: false; readonly errors: readonly ErrorDetail[] };

export interface ValidateContext {
  readonly receivedAt: number;
  /**
   * The event's `ip` whatever the event says (publishable keys: the browser's own connecting
   * address; a public key's claim of another address is not believed).
   */
  readonly clientIp?: string;
  /**
   * The `user_agent` of an event that has none (publishable keys: the browser's own User-Agent
   * header, which a page cannot set; it is what the event would have said).
   */
  readonly clientUserAgent?: string;
  /** The request's budget for unknown-field suggestions, shared by a batch's events. */
  readonly suggestions?: SuggestionBudget;
}

/** One problem per field, naming the field and what it accepts; the event type's rule in its own words. */
const schemaErrors = (body: unknown): ErrorDetail[] =>
  problemsOf(compiled.Errors(body), (error, field) => {
    if (error.type === ValueErrorType.ObjectRequiredProperty) return undefined;
    if (field === 'event' && typeof error.value === 'string') return EVENT_TYPE_RULE;
    return mismatchMessage(field, error.schema);
  });

/**
 * Walks the body once without recursion (a body may nest 100,000 levels): rejects
 * prototype-polluting keys anywhere, any value nested deeper than 32 levels, and NUL
 * characters in strings (PostgreSQL cannot store them; no real event carries them).
 */
function structureErrors(body: Record<string, unknown>): ErrorDetail[] {
  return structureIsSound(body) ? [] : describeStructure(body);
}

/** The hot path: no paths, no allocations per value beyond the two stacks. */
function structureIsSound(body: Record<string, unknown>): boolean {
  const values: unknown[] = [body];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop() as number;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return false;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_METADATA_DEPTH) return false;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        values.push(value[i]);
        depths.push(depth + 1);
      }
      continue;
    }
    for (const key in value) {
      if (FORBIDDEN_KEYS.has(key)) return false;
      values.push((value as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return true;
}

/** The slow path, once a problem is known: finds it again with its path for the message. */
function describeStructure(body: Record<string, unknown>): ErrorDetail[] {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: body, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop() as { value: unknown; depth: number; path: string };
    if (typeof value === 'string' && value.includes('\u0000'))
      return [{ field: path || '(body)', message: `${path} must not contain the NUL character (U+0000)` }];
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_METADATA_DEPTH) {
      const field = /^[^.[]+/.exec(path)?.[0] ?? 'metadata';
      return [{ field, message: `${field} must be at most ${MAX_METADATA_DEPTH} levels deep` }];
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], depth: depth + 1, path: `${path}[${i}]` });
      continue;
    }
    for (const key of Object.keys(value)) {
      const keyPath = path ? `${path}.${key}` : key;
      if (FORBIDDEN_KEYS.has(key)) return [{ field: keyPath, message: `the key "${key}" is not allowed anywhere in an event` }];
      // A top-level field's own object (metadata, request) is level 1.
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, path: keyPath });
    }
  }
  return [];
}

/** Serialised size over the limit; empty metadata (most events) costs nothing. */
function metadataTooLarge(metadata: Record<string, unknown>): boolean {
  let empty = true;
  for (const _ in metadata) {
    empty = false;
    break;
  }
  if (empty) return false;
  const text = JSON.stringify(metadata);
  // Each UTF-16 unit is at most 3 UTF-8 bytes: short texts need no byte count.
  return text.length * 3 > MAX_METADATA_BYTES && Buffer.byteLength(text) > MAX_METADATA_BYTES;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A name as an error message shows it: a long one is cut to its first 64 characters. */
function shortName(name: string): string {
  if (name.length <= 64) return name;
  // A cut between the two halves of a surrogate pair would leave half a character.
  const cut = name.charCodeAt(63) >= 0xd800 && name.charCodeAt(63) <= 0xdbff ? 63 : 64;
  return `${name.slice(0, cut)}…`;
}

function longNameError(name: string, prefix: string): ErrorDetail {
  const field = `${prefix}${shortName(name)}`;
  return { field, message: `field names must be at most ${MAX_FIELD_NAME_LENGTH} characters; ${field} has ${name.length} (put long names inside metadata)` };
}

const TOO_MANY_UNKNOWN_FIELDS: readonly ErrorDetail[] = [
  {
    field: '(body)',
    message: `an event may have at most ${MAX_UNKNOWN_FIELDS} unknown fields (they are kept in metadata.extra); put the rest in metadata`,
  },
];

/**
 * The fields the schema does not name (in the event and in `request`): more than
 * MAX_UNKNOWN_FIELDS of them, or names longer than MAX_FIELD_NAME_LENGTH. Checked first, and
 * only as far as the limit: walking, checking or copying an object of thousands of keys costs
 * V8 more than parsing it did, and a long name is refused before anything compares it.
 */
function unknownFieldErrors(record: Record<string, unknown>): readonly ErrorDetail[] | undefined {
  let unknown = 0;
  let errors: ErrorDetail[] | undefined;
  for (const key in record) {
    if (KNOWN_FIELDS.has(key)) continue;
    if (++unknown > MAX_UNKNOWN_FIELDS) return TOO_MANY_UNKNOWN_FIELDS;
    if (key.length > MAX_FIELD_NAME_LENGTH) (errors ??= []).push(longNameError(key, ''));
  }
  const request = record.request;
  if (!isPlainObject(request)) return errors;
  for (const key in request) {
    if (REQUEST_FIELDS.has(key)) continue;
    if (++unknown > MAX_UNKNOWN_FIELDS) return TOO_MANY_UNKNOWN_FIELDS;
    if (key.length > MAX_FIELD_NAME_LENGTH) (errors ??= []).push(longNameError(key, 'request.'));
  }
  return errors;
}

interface UnknownField {
  /** Its path as sent: `actorId`, `request.status_code`. */
  readonly path: string;
  readonly name: string;
  readonly value: unknown;
  readonly suggestion: string | undefined;
}

interface UnknownFields {
  /** Top-level fields, for metadata.extra. */
  readonly extra: UnknownField[];
  /** Members of `request`, for metadata.extra.request. */
  readonly request: UnknownField[];
}

/** The fields the schema does not name, or undefined when there are none (most events). */
function unknownFields(record: Record<string, unknown>, shared: SuggestionBudget | undefined): UnknownFields | undefined {
  let found: UnknownFields | undefined;
  let budget = shared;
  for (const key in record) {
    if (KNOWN_FIELDS.has(key)) continue;
    found ??= { extra: [], request: [] };
    budget ??= new SuggestionBudget();
    found.extra.push({ path: key, name: key, value: record[key], suggestion: suggester.suggest(key, false, budget) });
  }
  const request = record.request;
  if (!isPlainObject(request)) return found;
  for (const key in request) {
    if (REQUEST_FIELDS.has(key)) continue;
    found ??= { extra: [], request: [] };
    budget ??= new SuggestionBudget();
    found.request.push({ path: `request.${key}`, name: key, value: request[key], suggestion: suggester.suggest(key, true, budget) });
  }
  return found;
}

/**
 * `fields` added to a copy of `into`, each under its own name or, when `into` already holds
 * that name, the first of `<name>~2`, `<name>~3`, … it does not: the event's own value and the
 * unknown field are both kept. Each field's warning names where it went (`base` plus the key).
 */
function keepAll(into: Record<string, unknown> | undefined, fields: readonly UnknownField[], base: string, warnings: FieldWarning[]): Record<string, unknown> {
  const merged: Record<string, unknown> = Object.assign({}, into);
  for (const field of fields) {
    let key = field.name;
    for (let n = 2; Object.hasOwn(merged, key); n++) key = `${field.name}~${n}`;
    merged[key] = field.value;
    warnings.push(fieldWarning(field.path, field.suggestion, `${base}${key}`));
  }
  return merged;
}

/**
 * The unknown fields merged into the event's own metadata.extra (and its `request` member),
 * with their warnings; undefined when a value in the way is not an object (a string or array
 * has no keys to merge into).
 */
function mergeExtra(into: unknown, unknown: UnknownFields): { extra: Record<string, unknown>; warnings: FieldWarning[] } | undefined {
  if (into !== undefined && !isPlainObject(into)) return undefined;
  const warnings: FieldWarning[] = [];
  const extra = keepAll(into, unknown.extra, 'metadata.extra.', warnings);
  if (unknown.request.length > 0) {
    const existing = into?.request;
    if (existing !== undefined && !isPlainObject(existing)) return undefined;
    extra.request = keepAll(existing, unknown.request, 'metadata.extra.request.', warnings);
  }
  return { extra, warnings };
}

function parseTimestamp(value: string | number | undefined, receivedAt: number): number | ErrorDetail {
  if (value === undefined) return receivedAt;
  const time = readTime(value);
  if (typeof value === 'number') {
    if (time.problem === 'form') return { field: 'timestamp', message: 'timestamp must be a finite number of Unix milliseconds' };
    // Beyond the times a Date holds is before 2000 or more than a day ahead: said as such below.
    const ms = time.ms ?? Math.trunc(value);
    if (ms < EARLIEST_TIMESTAMP_MS) return { field: 'timestamp', message: 'timestamp must be Unix milliseconds after 2000-01-01 (this looks like seconds)' };
    return ms > receivedAt + FUTURE_TOLERANCE_MS ? { field: 'timestamp', message: 'timestamp must not be more than 24 hours in the future' } : ms;
  }
  if (time.problem === 'form')
    return { field: 'timestamp', message: 'timestamp must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z, or Unix milliseconds' };
  if (time.ms === undefined) return { field: 'timestamp', message: 'timestamp is not a valid date' };
  if (time.ms < EARLIEST_TIMESTAMP_MS) return { field: 'timestamp', message: 'timestamp must be after 2000-01-01' };
  if (time.ms > receivedAt + FUTURE_TOLERANCE_MS) return { field: 'timestamp', message: 'timestamp must not be more than 24 hours in the future' };
  return time.ms;
}

function normaliseIp(value: string): string | undefined {
  // Four-part decimal IPv4 or IPv6 only: legacy forms ("1.2.3", "0x7f.1") are not addresses users send.
  const address = parseAddress(value);
  if (address === undefined) return undefined;
  // A dotted quad the parser accepts (no leading zeros) is already canonical: no new string.
  return address.version === 4 && !value.includes(':') ? value : formatAddress(address);
}

/** The validate stage for one event body: a typed event, or every problem found. */
export function validateEvent(body: unknown, ctx: ValidateContext): ValidationResult {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, errors: [{ field: '(body)', message: 'an event must be a JSON object with at least the field "event"' }] };
  }
  const record = body as Record<string, unknown>;
  const unknownErrors = unknownFieldErrors(record);
  if (unknownErrors !== undefined) return { ok: false, errors: unknownErrors };
  const structural = structureErrors(record);
  if (structural.length > 0) return { ok: false, errors: structural };
  const metadataIsObject = record.metadata === undefined || isPlainObject(record.metadata);
  if (!compiled.Check(body) || !metadataIsObject) {
    const errors = schemaErrors(body);
    if (!metadataIsObject) errors.push({ field: 'metadata', message: 'metadata must be an object' });
    return { ok: false, errors };
  }
  const input = body as EventBody;
  const errors: ErrorDetail[] = [];

  const occurredAt = parseTimestamp(input.timestamp, ctx.receivedAt);
  if (typeof occurredAt !== 'number') errors.push(occurredAt);
  if (input.email !== undefined && !EMAIL.test(input.email)) errors.push({ field: 'email', message: 'email must look like name@domain' });
  let ip: string | undefined;
  if (ctx.clientIp !== undefined) {
    ip = normaliseIp(ctx.clientIp);
  } else if (input.ip !== undefined) {
    ip = normaliseIp(input.ip);
    if (ip === undefined) errors.push({ field: 'ip', message: 'ip must be an IPv4 or IPv6 address' });
  }

  let metadata: Record<string, unknown> = input.metadata ?? {};
  let warnings: FieldWarning[] | undefined;
  const unknown = unknownFields(record, ctx.suggestions);
  if (unknown !== undefined) {
    const merged = mergeExtra(metadata.extra, unknown);
    if (merged !== undefined) {
      metadata = Object.assign({}, metadata, { extra: merged.extra });
      warnings = merged.warnings;
    } else
      errors.push({
        field: 'metadata.extra',
        message: 'metadata.extra (and metadata.extra.request) must be an object when the event has unknown fields (they are kept in it)',
      });
  }
  if (metadataTooLarge(metadata)) {
    errors.push({
      field: 'metadata',
      message: `metadata must be at most ${MAX_METADATA_BYTES} bytes serialised (unknown fields count, they are kept in metadata.extra)`,
    });
  }
  if (errors.length > 0) return { ok: false, errors };

  let request: RequestInfo | undefined;
  if (input.request) {
    const { method, path, status, query } = input.request;
    request = { method: method?.toUpperCase(), path, status, query };
  }
  const event: ValidatedEvent = {
    type: input.event,
    eventId: input.event_id,
    payloadDigest: input.event_id === undefined ? undefined : hash('sha256', canonicalJson(body), 'hex'),
    occurredAt: occurredAt as number,
    receivedAt: ctx.receivedAt,
    actorId: input.actor_id,
    email: input.email,
    ip,
    userAgent: input.user_agent ?? ctx.clientUserAgent,
    sessionId: input.session_id,
    host: input.host,
    request,
    metadata,
    passwordSha1: input.password_sha1?.toLowerCase(),
  };
  return warnings === undefined ? { ok: true, event } : { ok: true, event, warnings };
}

/**
 * The refusal of a request with events its key may not send (src/catalog/key-kinds.ts): only
 * publishable keys are refused any. In a batch, every refused event is named by its index.
 */
function notAllowedForKey(events: readonly ValidatedEvent[], batch: boolean): Rejection {
  const allowed = publishableFamiliesText();
  const details: ErrorDetail[] = [];
  for (let index = 0; index < events.length; index++) {
    const type = (events[index] as ValidatedEvent).type;
    if (keyMaySend('publishable', type)) continue;
    const message = `${type} is not allowed for a publishable key (it may send ${allowed} events)`;
    details.push(batch ? { index, field: 'event', message } : { field: 'event', message });
  }
  const first = details[0] as ErrorDetail;
  const type = (events[first.index ?? 0] as ValidatedEvent).type;
  const where = batch ? `event ${first.index}: ` : '';
  const whole = batch ? ' The whole batch was refused; nothing was stored.' : '';
  return reject(
    'EVENT_TYPE_NOT_ALLOWED_FOR_KEY',
    `${where}a publishable key may send only ${allowed} events; ${type} needs a secret key, sent from your servers (or the host agent).${whole}`,
    details,
  );
}

/** A request's events, all valid, or why the whole request was refused (nothing is consumed). */
export type ValidatedRequest =
  | {
      readonly ok: true;
      readonly events: ValidatedEvent[];
      /** Each event's unknown fields, by request index; undefined when no event has any. */
      readonly warnings?: readonly (readonly FieldWarning[] | undefined)[];
    }
  | { readonly ok: false; readonly rejection: Rejection };

/** What the HTTP layer hands the pipeline: one event's body, or a batch body. */
export type IngestInput = { readonly kind: 'single'; readonly body: unknown } | { readonly kind: 'batch'; readonly body: unknown };

export type RequestValidator = (input: IngestInput, ctx: AccountContext, connectingIp: string, receivedAt: number, userAgent?: string) => ValidatedRequest;

/** The longest `user_agent` an event may carry; a longer User-Agent header is cut to it. */
const MAX_USER_AGENT = 2048;

/**
 * Validates a single event or a whole batch (shape, plan's batch size, every event): a batch with
 * one invalid event is refused whole, naming each problem by index.
 */
export const validateRequest: RequestValidator = (input, ctx, connectingIp, receivedAt, userAgent) => {
  const publishable = ctx.keyKind === 'publishable';
  const eventCtx: ValidateContext = {
    receivedAt,
    clientIp: publishable ? connectingIp : undefined,
    clientUserAgent: publishable && userAgent ? userAgent.slice(0, MAX_USER_AGENT) : undefined,
    suggestions: new SuggestionBudget(),
  };
  if (input.kind === 'single') {
    const result = validateEvent(input.body, eventCtx);
    if (!result.ok) return { ok: false, rejection: reject('INVALID_EVENT', result.errors[0]?.message ?? 'invalid event', result.errors) };
    if (!keyMaySend(ctx.keyKind, result.event.type)) return { ok: false, rejection: notAllowedForKey([result.event], false) };
    return { ok: true, events: [result.event], ...(result.warnings && { warnings: [result.warnings] }) };
  }
  const plan = ctx.plan;
  if (plan.batchMax === 0)
    return {
      ok: false,
      rejection: reject(
        'PLAN_UPGRADE_REQUIRED',
        `The batch endpoint is not available on the ${plan.name} plan; send events one by one to POST /v1/events or upgrade.`,
      ),
    };
  const body = input.body as { events?: unknown } | null;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Array.isArray(body.events)) {
    return {
      ok: false,
      rejection: reject('INVALID_EVENT', 'a batch must be a JSON object {"events": [event, ...]}', [{ field: 'events', message: 'events must be an array' }]),
    };
  }
  // Tens of thousands of unknown keys are possible: only the first are described.
  const extraKeys: string[] = [];
  let extraCount = 0;
  for (const key of Object.keys(body)) {
    if (key === 'events') continue;
    if (extraKeys.length < MAX_ERROR_DETAILS) extraKeys.push(key);
    extraCount++;
  }
  if (extraCount > 0)
    return {
      ok: false,
      rejection: {
        code: 'INVALID_EVENT',
        message: `unknown field "${shortName(extraKeys[0] as string)}" in batch body${extraCount > 1 ? ` (and ${extraCount - 1} more)` : ''}`,
        details: extraKeys.map((k) => ({ field: shortName(k), message: 'unknown batch field' })),
        detailsTotal: extraCount,
      },
    };
  const raw = body.events;
  if (raw.length === 0)
    return {
      ok: false,
      rejection: reject('INVALID_EVENT', 'events must not be empty', [{ field: 'events', message: 'events must not be empty' }]),
    };
  if (raw.length > plan.batchMax) {
    return {
      ok: false,
      rejection: reject(
        'BATCH_TOO_LARGE',
        `The ${plan.name} plan accepts at most ${plan.batchMax} events per batch; this batch has ${raw.length}. Nothing was accepted.`,
      ),
    };
  }
  const events: ValidatedEvent[] = [];
  let warnings: (readonly FieldWarning[] | undefined)[] | undefined;
  const details = [];
  for (let index = 0; index < raw.length; index++) {
    const result = validateEvent(raw[index], eventCtx);
    if (result.ok) {
      events.push(result.event);
      if (result.warnings) (warnings ??= new Array<readonly FieldWarning[] | undefined>(raw.length))[index] = result.warnings;
    } else for (const e of result.errors) details.push({ index, field: e.field, message: e.message });
  }
  if (details.length > 0) {
    const first = details[0] as { index: number; message: string };
    return {
      ok: false,
      rejection: reject('INVALID_EVENT', `event ${first.index}: ${first.message} (the whole batch was rejected; nothing was stored)`, details),
    };
  }
  if (events.some((event) => !keyMaySend(ctx.keyKind, event.type))) return { ok: false, rejection: notAllowedForKey(events, true) };
  return warnings ? { ok: true, events, warnings } : { ok: true, events };
};

/**
 * The cheapest stage, and a bad request consumes no events (minute window, quota). It still takes
 * one request from the key's per-second window: a key, publishable ones included, cannot have
 * invalid bodies checked faster than its plan's requests per second; over that window the answer
 * is the 429. An accepted request's unknown fields are counted by the field each most likely meant.
 */
export function validateStage(windows: KeyWindows, onUnknownField?: (family: string) => void): Stage<Received, Validated> {
  async function refuse(rejection: Rejection, { account, now }: Received): Promise<Exit> {
    const limit = await windows(account, 0, now);
    if (!limit.ok) return new Exit({ ok: false, limit: limit.status, rejection: limit.rejection }, 'rejected_rate_limited', 1);
    return new Exit({ ok: false, rejection, limit: limit.status }, 'rejected_invalid', 1);
  }
  return (received) => {
    const { input, account, now, held } = received;
    const validated = validateRequest(input, account, received.connectingIp, now, received.userAgent);
    if (!validated.ok) return refuse(validated.rejection, received);
    const { events, warnings } = validated;
    if (warnings !== undefined && onUnknownField !== undefined)
      for (const list of warnings) for (const warning of list ?? []) onUnknownField(familyOf(warning));
    held.events = events.length;
    return new IngestRequest(input.kind, account, now, events, warnings, held);
  };
}
