import '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../storage/store.js';
import { ApiError } from '../errors.js';
import { bearerToken } from '../authenticator.js';
import type { Metrics } from '../metrics.js';
import { sameSecret } from '../secrets.js';

export interface OpsRouteDeps {
  readonly store: Store;
  readonly metrics: Metrics;
  /** Readiness facts; /readyz shows only `redis` from them (paths and data versions stay in the start-up log). */
  readonly status: () => Record<string, unknown>;
  /** True while ingestion requests are refused 503 OVERLOADED. */
  readonly overloaded: () => boolean;
  /** When set, /metrics requires `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  /** False when /metrics has a listener of its own (then this app answers 404 for it). */
  readonly serveMetrics: boolean;
}

/** True when the request may read /metrics: no token is configured, or it presents the token. */
export function metricsAllowed(token: string | undefined, headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  if (token === undefined) return true;
  const presented = bearerToken(headers);
  return presented !== undefined && sameSecret(presented, token);
}

export function registerOpsRoutes(app: FastifyInstance, deps: OpsRouteDeps): void {
  const ops = { tags: ['operations'] };
  app.get('/healthz', { schema: { ...ops, summary: 'The process is up' } }, async () => ({ status: 'ok' }));

  // Terse on purpose: the route is unauthenticated, so it names no file, path or data version.
  // An overloaded instance stays ready (200): it answers what it cannot take 503 OVERLOADED at
  // once, while a balancer taking it out would move its load onto instances as loaded as it.
  app.get('/readyz', { schema: { ...ops, summary: 'Storage is reachable' } }, async (request, reply) => {
    const redis = deps.status().redis;
    const shared = redis === undefined ? { overloaded: deps.overloaded() } : { redis, overloaded: deps.overloaded() };
    try {
      await deps.store.ping();
      return { status: 'ready', storage: deps.store.kind, ...shared };
    } catch (err) {
      // The database error names hosts and ports: it goes to the log, not to the probe's answer.
      request.log.warn({ err }, 'readiness check failed: storage unreachable');
      reply.code(503);
      return { status: 'unavailable', storage: deps.store.kind, ...shared, error: 'storage unreachable' };
    }
  });

  if (deps.serveMetrics) {
    app.get(
      '/metrics',
      { schema: { ...ops, summary: 'Prometheus metrics (Authorization: Bearer <VIGIL_METRICS_TOKEN> when that is set)' } },
      async (request, reply) => {
        if (!metricsAllowed(deps.metricsToken, request.headers))
          throw new ApiError({ code: 'UNAUTHORIZED', message: 'Missing or wrong metrics token (send "Authorization: Bearer <VIGIL_METRICS_TOKEN>").' });
        reply.header('Content-Type', deps.metrics.registry.contentType);
        return deps.metrics.registry.metrics();
      },
    );
  }

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
