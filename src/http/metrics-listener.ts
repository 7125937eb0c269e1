import { createServer, type Server } from 'node:http';
import { errorBody } from './errors.js';
import { type Rejection } from '../event/rejection.js';
import type { Metrics } from './metrics.js';
import { metricsAllowed } from './routes/ops.js';
import { newId } from '../util/ids.js';

/**
 * /metrics on an address of its own (VIGIL_METRICS_HOST, VIGIL_METRICS_PORT), typically a
 * loopback or private interface a scraper reaches and clients do not. It serves GET /metrics
 * only (with the metrics token when one is set) and answers everything else with the usual
 * error body.
 */
export async function startMetricsListener(metrics: Metrics, options: { host: string; port: number; token?: string }): Promise<Server> {
  const server = createServer((request, response) => {
    const id = newId('req');
    const fail = (status: number, rejection: Rejection) => {
      response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': id });
      response.end(JSON.stringify(errorBody(rejection, id)));
    };
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') return fail(404, { code: 'NOT_FOUND', message: `No route ${request.method ?? ''} ${path}.` });
    if (request.method !== 'GET' && request.method !== 'HEAD') return fail(405, { code: 'METHOD_NOT_ALLOWED', message: 'Only GET /metrics is served here.' });
    if (!metricsAllowed(options.token, request.headers))
      return fail(401, { code: 'UNAUTHORIZED', message: 'Missing or wrong metrics token (send "Authorization: Bearer <VIGIL_METRICS_TOKEN>").' });
    metrics.registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'X-Request-Id': id });
        response.end(text);
      },
      () => fail(500, { code: 'INTERNAL', message: 'Internal error; it has been logged with the request id.' }),
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
