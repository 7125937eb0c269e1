import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

interface RequestChildren {
  readonly count: { inc(): void };
  readonly duration: { observe(seconds: number): void };
}

/** Prometheus metrics of one app instance (own registry, so tests can build many apps). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'vigil_' });
  const requests = new Counter({
    name: 'vigil_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const requestDuration = new Histogram({
    name: 'vigil_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['route'],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  // prom-client hashes a label object on every call; a request's label values come from a small
  // set (routes x methods x statuses), so each combination's children are looked up once, by
  // route, method and status in nested maps (no key string built per request).
  const children = new Map<string, Map<string, Map<number, RequestChildren>>>();
  const childrenFor = (route: string, method: string, status: number): RequestChildren => {
    let byMethod = children.get(route);
    if (byMethod === undefined) children.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (found === undefined) {
      found = { count: requests.labels({ route, method, status: String(status) }), duration: requestDuration.labels({ route }) };
      byStatus.set(status, found);
    }
    return found;
  };
  return {
    registry,
    requests,
    requestDuration,
    /** One finished HTTP request. */
    recordRequest(route: string, method: string, status: number, seconds: number): void {
      const found = childrenFor(route, method, status);
      found.count.inc();
      found.duration.observe(seconds);
    },
    events: new Counter({
      name: 'vigil_events_total',
      help: 'Events by outcome (accepted, dropped_quota, dropped_suppressed, duplicate, rejected_*)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    unknownFields: new Counter({
      name: 'vigil_unknown_fields_total',
      help: 'Unknown event fields kept in metadata.extra, by the event field they most likely meant (unrecognised: none)',
      labelNames: ['family'],
      registers: [registry],
    }),
    commitGroupSize: new Histogram({
      name: 'vigil_commit_group_events',
      help: 'Events written per commit group',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000],
      registers: [registry],
    }),
    commitDuration: new Histogram({
      name: 'vigil_commit_duration_seconds',
      help: 'Commit group transaction time',
      labelNames: ['ok'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers: [registry],
    }),
    adminAuthFailures: new Counter({
      name: 'vigil_admin_auth_failures_total',
      help: 'Admin API requests with a wrong or missing token: answered 401 (wrong_token), or 429 from a source past its failure limit (throttled)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    alerts: new Counter({
      name: 'vigil_alerts_total',
      help: 'Alerts raised (opened) or updated, by type',
      labelNames: ['type', 'opened'],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
