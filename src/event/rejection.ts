/**
 * Expected rejections: values that travel from any stage to the HTTP layer, which renders them
 * with their status (src/http/errors.ts). Only infrastructure failures throw.
 */

/** Every error code the API answers with (INVALID_REQUEST: malformed query strings and admin bodies). */
export const ERROR_CODES = [
  'INVALID_JSON',
  'INVALID_EVENT',
  'INVALID_REQUEST',
  'BATCH_TOO_LARGE',
  'INVALID_THREAT_MODEL',
  'IDEMPOTENCY_CONFLICT',
  'CONFLICT',
  'UNAUTHORIZED',
  'PLAN_UPGRADE_REQUIRED',
  'FORBIDDEN',
  'EVENT_TYPE_NOT_ALLOWED_FOR_KEY',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'REQUEST_TIMEOUT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'DRY_RUN_BUSY',
  'THREAT_MODEL_BUSY',
  'HEADERS_TOO_LARGE',
  'INTERNAL',
  'UNAVAILABLE',
  'OVERLOADED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error body lists at most this many details; `details_total` then says how many there were. */
export const MAX_ERROR_DETAILS = 100;

export interface ErrorDetail {
  readonly index?: number;
  readonly field: string;
  readonly message: string;
}

/** An expected rejection, carried as a value until the HTTP layer renders it. */
export interface Rejection {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: readonly ErrorDetail[];
  /** How many problems there were when `details` holds only the first of them. */
  readonly detailsTotal?: number;
  /** Seconds, for 429 and 503. */
  readonly retryAfter?: number;
}

export const reject = (code: ErrorCode, message: string, details?: readonly ErrorDetail[]): Rejection =>
  details ? { code, message, details } : { code, message };
