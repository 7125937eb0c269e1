/** The error codes of design 3.3 (plus INVALID_REQUEST for malformed query strings and admin bodies). */
export const ERROR_STATUS = {
  INVALID_JSON: 400,
  INVALID_EVENT: 400,
  INVALID_REQUEST: 400,
  BATCH_TOO_LARGE: 400,
  INVALID_THREAT_MODEL: 400,
  UNAUTHORIZED: 401,
  PLAN_UPGRADE_REQUIRED: 403,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

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
  /** Seconds, for 429 and 503. */
  readonly retryAfter?: number;
}

export const reject = (code: ErrorCode, message: string, details?: readonly ErrorDetail[]): Rejection =>
  details ? { code, message, details } : { code, message };

/** Thrown inside route handlers to short-circuit with a coded error; rendered by the error handler. */
export class ApiError extends Error {
  readonly statusCode: number;
  constructor(readonly rejection: Rejection) {
    super(rejection.message);
    this.name = 'ApiError';
    this.statusCode = ERROR_STATUS[rejection.code];
  }
}

export function errorBody(rejection: Rejection, requestId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { error: rejection.code, message: rejection.message, request_id: requestId };
  if (rejection.details) body.details = rejection.details;
  if (rejection.code === 'RATE_LIMITED') body.retry_after = rejection.retryAfter ?? 1;
  return body;
}
