import { ApiError } from './errors.js';
import type { WindowStatus } from '../limits/types.js';
import type { AccountContext } from '../event/account.js';
import type { Access } from './guards.js';

/** What the guards learned about a request, read by handlers and the header hook. */
export interface RequestState {
  /** The matched route's path (undefined: no route matched), read once from Fastify's routeOptions, which builds a new object on every read. */
  route?: string;
  /** Who may call the matched route (its `config.access`). */
  access?: Access;
  account?: AccountContext;
  allowedOrigins?: readonly string[];
  /** Window reported in X-RateLimit-* headers; the last check that ran decides it. */
  rateLimit?: WindowStatus;
  /** The key came in the URL (a sendBeacon request): the body may then be JSON sent as text/plain. */
  beacon?: boolean;
  /** The request was counted against its key's per-second window (ingestion routes). */
  counted?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    vigil: RequestState;
  }
}

/**
 * The account a guarded route runs for. The guards authenticate every /v1 route before its
 * handler, so a handler without one is a routing mistake, answered as a missing key.
 */
export function requestAccount(request: { readonly vigil: RequestState }): AccountContext {
  const account = request.vigil.account;
  if (!account) throw new ApiError({ code: 'UNAUTHORIZED', message: 'Missing API key.' });
  return account;
}
