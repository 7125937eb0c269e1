import '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../storage/store.js';
import type { Metrics } from '../metrics.js';

export interface OpsRouteDeps {
  readonly store: Store;
  readonly metrics: Metrics;
  /** Extra readiness facts (enrichment databases, feeds, Redis) for /readyz. */
  readonly status: () => Record<string, unknown>;
}

export function registerOpsRoutes(app: FastifyInstance, deps: OpsRouteDeps): void {
  const ops = { tags: ['operations'] };
  app.get('/healthz', { schema: { ...ops, summary: 'The process is up' } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { ...ops, summary: 'Storage is reachable' } }, async (request, reply) => {
    try {
      await deps.store.ping();
      return { status: 'ready', storage: deps.store.kind, ...deps.status() };
    } catch (err) {
      // The database error names hosts and ports: it goes to the log, not to the probe's answer.
      request.log.warn({ err }, 'readiness check failed: storage unreachable');
      reply.code(503);
      return { status: 'unavailable', storage: deps.store.kind, error: 'storage unreachable' };
    }
  });

  app.get('/metrics', { schema: { ...ops, summary: 'Prometheus metrics' } }, async (_request, reply) => {
    reply.header('Content-Type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
