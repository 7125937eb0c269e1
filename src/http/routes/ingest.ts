import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../../limits/types.js';
import { BatchResultSchema, EventResultSchema, EventSchema } from '../../pipeline/event-schema.js';
import type { IngestInput, IngestOutcome, IngestPipeline } from '../../pipeline/ingest-pipeline.js';
import { answerJson, batchResultJson, type EventResult } from '../../pipeline/answer.js';
import type { Clock } from '../../util/clock.js';
import { ApiError, parseJsonBody } from '../errors.js';
import type { IngestAdmission, OverloadReason } from '../ingest-admission.js';
import type { Rejection } from '../../event/rejection.js';
import { rateLimitHeaderHook, setRateLimitHeaders } from '../rate-limit-headers.js';
import { ErrorResponses, KeyAuth, noValidation } from '../schemas.js';
import { requestAccount } from '../context.js';

export interface IngestRouteDeps {
  readonly pipeline: IngestPipeline;
  readonly admission: IngestAdmission;
  /** A request was refused admission (503 OVERLOADED). */
  readonly onOverloaded?: (reason: OverloadReason) => void;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly maxEventBytes: number;
  readonly maxBatchBytes: number;
}

/**
 * The request's body, parsed, which the request then no longer holds: while its events commit,
 * neither the text nor the parsed body stays alive. The pipeline counts the request in the key's
 * windows whatever it answers; a body that is not JSON is counted by the onSend hook instead, as
 * every request refused before the pipeline.
 */
function takeBody(request: FastifyRequest): unknown {
  const text = request.body;
  request.body = undefined;
  const body = typeof text === 'string' ? parseJsonBody(text) : text;
  request.vigil.counted = true;
  return body;
}

/** The answer to a request refused admission: nothing of it was read, counted or stored. */
function overloaded(seconds: number): Rejection {
  return {
    code: 'OVERLOADED',
    message: `This instance is receiving more events than it can ingest; nothing was accepted. Retry in ${seconds} second${seconds === 1 ? '' : 's'} with the same event_id.`,
    retryAfter: seconds,
  };
}

/**
 * The preParsing hook that admits an ingestion request before its body is read
 * (ingest-admission.ts says why), by the length its Content-Length announces. A body of unknown
 * length counts as the largest the route accepts; one announced beyond that is not held back,
 * since reading it fails at once (413). The request leaves when its response closes, whether it
 * was answered, refused or abandoned by the client: exactly once, and never before it entered.
 * A request refused admission is answered 503 OVERLOADED at once: it is counted in neither of
 * the key's windows nor the quota (the headers report the windows as they are), and never enters.
 */
function admitBeforeParsing(admission: IngestAdmission, bodyLimit: number, onOverloaded: ((reason: OverloadReason) => void) | undefined) {
  // Callback style, and no promise unless the request has to wait: the common path adds one
  // listener to the response and nothing else.
  return (request: FastifyRequest, reply: FastifyReply, _payload: unknown, done: (err?: Error | null) => void): void => {
    const announced = request.headers['content-length'];
    const bytes = announced === undefined ? bodyLimit : Number(announced);
    if (!(bytes <= bodyLimit)) return done();
    // The guards have authenticated every ingestion request before its body is read.
    const account = request.vigil.account?.account.id ?? '';
    const admitted = admission.enter(bytes, account);
    if (admitted === undefined) {
      reply.raw.once('close', () => admission.leave(bytes, account));
      return done();
    }
    if (!(admitted instanceof Promise)) {
      onOverloaded?.(admitted.refused);
      // The rate-limit header hook then only reads the key's windows.
      request.vigil.counted = true;
      const seconds = admission.retryAfterSeconds();
      reply.header('Retry-After', String(seconds));
      return done(new ApiError(overloaded(seconds)));
    }
    let closed = false;
    let entered = false;
    reply.raw.once('close', () => {
      closed = true;
      if (entered) admission.leave(bytes, account);
    });
    void admitted.then(() => {
      entered = true;
      // A client that went away while its request waited: its turn is given back at once.
      if (closed) admission.leave(bytes, account);
      done();
    });
  };
}

/** POST /v1/events and POST /v1/events/batch: HTTP in, pipeline outcome out. */
export function registerIngestRoutes(app: FastifyInstance, deps: IngestRouteDeps): void {
  // Shared by both routes and named in OpenAPI (components.schemas.Event) for client generators.
  app.addSchema({ ...EventSchema, $id: 'Event' });
  const EventRef = { $ref: 'Event#' };
  const BatchBody = {
    type: 'object',
    required: ['events'],
    additionalProperties: false,
    properties: { events: { type: 'array', items: EventRef, description: 'Starter: at most 50; Pro and Business: at most 100' } },
  };
  const onSend = rateLimitHeaderHook(deps.limiter, deps.clock);

  async function handle(kind: IngestInput['kind'], request: FastifyRequest, reply: FastifyReply) {
    const account = requestAccount(request);
    // The body arrives as text (app.ts's JSON parser), read once the request was admitted.
    const outcome: IngestOutcome = await deps.pipeline.ingest(
      { kind, body: takeBody(request) },
      { account, connectingIp: request.ip, userAgent: request.headers['user-agent'] },
    );
    if (outcome.limit) setRateLimitHeaders(reply, outcome.limit, deps.clock.now());
    if (!outcome.ok) {
      if (outcome.rejection.retryAfter !== undefined) reply.header('Retry-After', String(outcome.rejection.retryAfter));
      throw new ApiError(outcome.rejection);
    }
    if (outcome.replayed) reply.header('Idempotent-Replay', 'true');
    // The body text was made once with the result (the idempotency row stores the same text) and
    // the request's warnings are appended: it is exactly what the 202 response schema would
    // serialise, so it is sent as it is.
    reply.code(202).type('application/json');
    return kind === 'single' ? answerJson(outcome.results[0] as EventResult, outcome.warnings?.[0]) : batchResultJson(outcome.results, outcome.warnings);
  }

  app.post('/v1/events', {
    bodyLimit: deps.maxEventBytes,
    config: { access: 'ingest' },
    preParsing: admitBeforeParsing(deps.admission, deps.maxEventBytes, deps.onOverloaded),
    onSend,
    validatorCompiler: noValidation,
    schema: {
      summary: 'Send one event',
      description: 'Validates, classifies, enriches, detects and scores one event; answers 202 after it is durably stored.',
      tags: ['ingestion'],
      security: KeyAuth,
      body: EventRef,
      response: { 202: EventResultSchema, ...ErrorResponses },
    },
    handler: (request, reply) => handle('single', request, reply),
  });

  app.post('/v1/events/batch', {
    bodyLimit: deps.maxBatchBytes,
    config: { access: 'ingest' },
    preParsing: admitBeforeParsing(deps.admission, deps.maxBatchBytes, deps.onOverloaded),
    onSend,
    validatorCompiler: noValidation,
    schema: {
      summary: 'Send a batch of events',
      description: 'All or nothing: an invalid event rejects the whole batch. Free plan: 403. Starter: 50 events; Pro and Business: 100.',
      tags: ['ingestion'],
      security: KeyAuth,
      body: BatchBody,
      response: { 202: BatchResultSchema, ...ErrorResponses },
    },
    handler: (request, reply) => handle('batch', request, reply),
  });
}
