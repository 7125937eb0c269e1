import { MAX_ERROR_DETAILS, type ErrorCode, type Rejection } from '../event/rejection.js';
import { errorMessage } from '../util/caught.js';

/** The HTTP status of each error code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  INVALID_JSON: 400,
  INVALID_EVENT: 400,
  INVALID_REQUEST: 400,
  BATCH_TOO_LARGE: 400,
  INVALID_THREAT_MODEL: 400,
  UNAUTHORIZED: 401,
  PLAN_UPGRADE_REQUIRED: 403,
  FORBIDDEN: 403,
  EVENT_TYPE_NOT_ALLOWED_FOR_KEY: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  IDEMPOTENCY_CONFLICT: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  DRY_RUN_BUSY: 429,
  THREAT_MODEL_BUSY: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  OVERLOADED: 503,
};

/**
 * Thrown inside route handlers to short-circuit with a coded error; rendered by the error handler.
 * It is an answer, not a fault: no stack trace is captured, since a client that sends thousands of
 * refused requests a second would otherwise pay for one on each.
 */
export class ApiError extends Error {
  readonly statusCode: number;
  constructor(readonly rejection: Rejection) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(rejection.message);
    Error.stackTraceLimit = limit;
    this.name = 'ApiError';
    this.statusCode = ERROR_STATUS[rejection.code];
  }
}

/** A request body's JSON; plain JSON.parse (prototype keys are refused by validation, not here). Not JSON: INVALID_JSON. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError({ code: 'INVALID_JSON', message: `The body is not valid JSON: ${errorMessage(err)}` });
  }
}

export function errorBody(rejection: Rejection, requestId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { error: rejection.code, message: rejection.message, request_id: requestId };
  const details = rejection.details;
  if (details) {
    // A hostile body can hold tens of thousands of problems: the answer stays small.
    const total = Math.max(rejection.detailsTotal ?? 0, details.length);
    body.details = details.length > MAX_ERROR_DETAILS ? details.slice(0, MAX_ERROR_DETAILS) : details;
    if (total > MAX_ERROR_DETAILS) body.details_total = total;
  }
  if (rejection.code === 'RATE_LIMITED' || rejection.code === 'DRY_RUN_BUSY' || rejection.code === 'THREAT_MODEL_BUSY' || rejection.code === 'OVERLOADED')
    body.retry_after = rejection.retryAfter ?? 1;
  return body;
}
