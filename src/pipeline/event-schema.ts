import { Type, type Static } from '@sinclair/typebox';

/** The authoritative event-type expression. */
export const EVENT_TYPE_PATTERN = '^[a-z][a-z0-9]{0,29}(\\.[a-z][a-z0-9_]{0,29}){1,3}$';
export const EVENT_TYPE_RULE =
  'event must match ^[a-z][a-z0-9]{0,29}(\\.[a-z][a-z0-9_]{0,29}){1,3}$: 2 to 4 dot-separated segments, each starting with a lowercase letter and at most 30 characters, lowercase letters and digits (underscores after the first segment), at most 100 characters in all';

/** The HTTP request an event describes; unknown members are kept in metadata.extra.request. */
export const RequestSchema = Type.Object(
  {
    method: Type.Optional(Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z]+$', description: 'HTTP method; stored in upper case' })),
    path: Type.Optional(Type.String({ maxLength: 2048, description: 'Request path, matched by the inferred-type rules and scanned for attacks' })),
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'HTTP status of the answer' })),
    query: Type.Optional(Type.String({ maxLength: 4096, description: 'Query string, scanned for attacks' })),
  },
  { additionalProperties: true, description: 'Unknown members are kept in metadata.extra.request and named in the answer warnings' },
);

const text = (maxLength: number, description: string) => Type.Optional(Type.String({ minLength: 1, maxLength, description }));

/**
 * One event. The same schema validates ingestion bodies (compiled once by the
 * validate stage) and documents them in the OpenAPI document.
 */
export const EventSchema = Type.Object(
  {
    event: Type.String({ maxLength: 100, pattern: EVENT_TYPE_PATTERN, description: 'Event type, e.g. auth.login.failure or custom.billing.refund' }),
    event_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_.:-]+$',
        description: 'Idempotency key: a repeat within 7 days with the same event answers the first result; with a different event, 409 IDEMPOTENCY_CONFLICT',
      }),
    ),
    timestamp: Type.Optional(
      Type.Union([Type.String({ maxLength: 40, description: 'ISO 8601' }), Type.Number({ description: 'Unix milliseconds' })], {
        description: 'When the event happened; default: time received; more than 24 h in the future is rejected',
      }),
    ),
    actor_id: text(256, 'The user or principal the event is about'),
    email: Type.Optional(Type.String({ maxLength: 320, description: 'The actor email' })),
    ip: Type.Optional(Type.String({ maxLength: 64, description: 'End-user IPv4 or IPv6 address (publishable keys: always the connecting address)' })),
    user_agent: Type.Optional(Type.String({ maxLength: 2048, description: 'The end user User-Agent header: browser, OS, automation and scanner detection' })),
    session_id: text(256, 'Session identifier'),
    host: text(255, 'Host name (agent events)'),
    request: Type.Optional(RequestSchema),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form object, at most 32 levels deep and 16 KiB serialised' })),
    password_sha1: Type.Optional(
      Type.String({ pattern: '^[0-9a-fA-F]{40}$', description: 'SHA-1 of the password, checked against breached lists then discarded' }),
    ),
  },
  { additionalProperties: true, description: 'Unknown fields are kept in metadata.extra and named in the answer warnings' },
);
export type EventBody = Static<typeof EventSchema>;

export const BatchSchema = Type.Object(
  { events: Type.Array(EventSchema, { description: 'Starter: at most 50; Pro and Business: at most 100' }) },
  { additionalProperties: false },
);

export const RiskSchema = Type.Object({
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  level: Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('critical')]),
  action: Type.Union([Type.Literal('allow'), Type.Literal('challenge'), Type.Literal('block')]),
  breakdown: Type.Array(Type.Object({ source: Type.String(), points: Type.Integer() })),
});

export const EventResultSchema = Type.Object({
  id: Type.Optional(Type.String()),
  status: Type.Union([Type.Literal('accepted'), Type.Literal('dropped'), Type.Literal('rejected')], {
    description: 'dropped: past the Free monthly cap; rejected (batches only): the event_id was used for a different event, see error',
  }),
  received_at: Type.Optional(Type.String()),
  risk: Type.Optional(RiskSchema),
  tags: Type.Optional(Type.Array(Type.String())),
  alerts: Type.Optional(Type.Array(Type.Object({ id: Type.String(), type: Type.String(), severity: Type.String() }))),
  error: Type.Optional(Type.Literal('IDEMPOTENCY_CONFLICT', { description: 'With status rejected' })),
  message: Type.Optional(Type.String({ description: 'With status rejected: what to do' })),
  degraded: Type.Optional(Type.Boolean({ description: 'Shared state was unreachable: limits and detection used this instance local state' })),
  warnings: Type.Optional(
    Type.Array(
      Type.Object({
        field: Type.String({ description: 'Path of the unknown field as sent, e.g. actorId or request.status_code' }),
        kept_in: Type.String({ description: 'Where it is stored, e.g. metadata.extra.actorId' }),
        did_you_mean: Type.Optional(Type.String({ description: 'The event field it most likely meant' })),
        message: Type.String(),
      }),
      { description: 'Fields this event sent that Vigil does not define; absent when there are none' },
    ),
  ),
});

export const BatchResultSchema = Type.Object({
  status: Type.Literal('accepted'),
  accepted: Type.Integer(),
  results: Type.Array(EventResultSchema),
});
